package ipc

import (
	"encoding/binary"
	"fmt"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
)

// payloadWriter turns the payloads an arrow ipc.Writer produces (schema, dictionary and
// record batch messages) into SCHEMA and BATCH frames. The frame payload is the Arrow
// encapsulated message: 0xFFFFFFFF, the int32 padded metadata length, the flatbuffer
// metadata and its padding, then the body buffers. The body buffers are collected by
// reference (SerializeBody writes them to us; we keep the slices), so the whole frame goes
// out in one writev with no copy of the data. Over shared memory a batch's body is copied
// once, into the ring, and the frame on the socket carries only its descriptor and head.
type payloadWriter struct {
	s      *Stream
	parts  [][]byte
	prefix [8]byte
	pad    [8]byte
	body   int
}

func (pw *payloadWriter) Start() error { return nil }
func (pw *payloadWriter) Close() error { return nil }

// Write collects one body part by reference; only SerializeBody calls it.
func (pw *payloadWriter) Write(p []byte) (int, error) {
	pw.parts = append(pw.parts, p)
	pw.body += len(p)
	return len(p), nil
}

func (pw *payloadWriter) WritePayload(p arrowipc.Payload) error {
	meta := p.Meta()
	if meta == nil {
		return fmt.Errorf("stream %d: arrow payload without metadata", pw.s.id)
	}
	defer meta.Release()
	mb := meta.Bytes()
	info, err := parseArrowMeta(mb)
	if err != nil {
		return fmt.Errorf("stream %d: encoding: %w", pw.s.id, err)
	}
	kind := KindBatch
	if info.headerType == arrowMsgSchema {
		if pw.s.schemaSent {
			return nil // SendSchema already sent it; the writer's own copy is redundant
		}
		kind = KindSchema
	}
	padded := (len(mb) + 7) &^ 7
	binary.LittleEndian.PutUint32(pw.prefix[0:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(pw.prefix[4:], uint32(padded))
	pw.parts = append(pw.parts[:0], pw.prefix[:], mb, pw.pad[:padded-len(mb)])
	pw.body = 0
	if err := p.SerializeBody(pw); err != nil {
		return err
	}
	if int64(pw.body) != info.bodyLength {
		return fmt.Errorf("stream %d: encoding: body of %d bytes, metadata says %d", pw.s.id, pw.body, info.bodyLength)
	}
	n := 8 + padded + pw.body
	done := false
	if kind == KindBatch && pw.s.c.shm != nil {
		// The body into the ring, the prefix and metadata (parts 0 to 2) on the socket.
		done, err = pw.s.sendRing(pw.parts[:3], pw.parts[3:], n)
	}
	if !done && err == nil {
		err = pw.s.sendData(kind, pw.parts, n)
	}
	for i := range pw.parts {
		pw.parts[i] = nil
	}
	if err == nil && kind == KindSchema {
		pw.s.schemaSent = true
	}
	return err
}
