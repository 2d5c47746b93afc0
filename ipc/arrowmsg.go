package ipc

import (
	"encoding/binary"
	"fmt"
)

// Arrow IPC message header types (the MessageHeader union of Message.fbs).
const (
	arrowMsgSchema          = 1
	arrowMsgDictionaryBatch = 2
	arrowMsgRecordBatch     = 3
)

// arrowMsgInfo is what the link needs from an Arrow message's flatbuffer metadata.
type arrowMsgInfo struct {
	version    int16 // MetadataVersion: 3 = V4, 4 = V5
	headerType uint8
	bodyLength int64
}

// parseArrowMessage checks the framing of an encapsulated Arrow IPC message (continuation
// marker 0xFFFFFFFF, int32 metadata length, flatbuffer Message, body) and reads the fields of
// its Message table with explicit bounds checks, so garbage is rejected without panics and
// without allocation. It returns the metadata and body ranges.
func parseArrowMessage(p []byte) (info arrowMsgInfo, meta, body []byte, err error) {
	if meta, body, err = splitArrowMessage(p); err != nil {
		return arrowMsgInfo{}, nil, nil, err
	}
	if info, err = parseArrowMeta(meta); err != nil {
		return arrowMsgInfo{}, nil, nil, err
	}
	if info.bodyLength != int64(len(body)) {
		return arrowMsgInfo{}, nil, nil, fmt.Errorf("%w: malformed Arrow message: body length %d in metadata, %d bytes follow", ErrProtocol, info.bodyLength, len(body))
	}
	return info, meta, body, nil
}

// parseArrowHead checks the head of an Arrow message whose body of bodyLen bytes lies
// elsewhere (an RBATCH's, in the ring): the prefix and metadata, and nothing after them.
func parseArrowHead(p []byte, bodyLen int) (info arrowMsgInfo, meta []byte, err error) {
	meta, rest, err := splitArrowMessage(p)
	if err != nil {
		return arrowMsgInfo{}, nil, err
	}
	if len(rest) != 0 {
		return arrowMsgInfo{}, nil, fmt.Errorf("%w: malformed RBATCH: %d bytes after the Arrow metadata", ErrProtocol, len(rest))
	}
	if info, err = parseArrowMeta(meta); err != nil {
		return arrowMsgInfo{}, nil, err
	}
	if info.bodyLength != int64(bodyLen) {
		return arrowMsgInfo{}, nil, fmt.Errorf("%w: malformed RBATCH: body length %d in metadata, the ring region holds %d", ErrProtocol, info.bodyLength, bodyLen)
	}
	return info, meta, nil
}

// splitArrowMessage checks the 8-byte prefix and splits the metadata from what follows.
func splitArrowMessage(p []byte) (meta, rest []byte, err error) {
	bad := func(format string, args ...any) ([]byte, []byte, error) {
		return nil, nil, fmt.Errorf("%w: malformed Arrow message: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	if len(p) < 8 {
		return bad("%d bytes, shorter than the 8-byte prefix", len(p))
	}
	if binary.LittleEndian.Uint32(p) != 0xFFFFFFFF {
		return bad("continuation marker %#08x, want 0xffffffff", binary.LittleEndian.Uint32(p))
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(p[4:])))
	if metaLen <= 0 || 8+metaLen > int64(len(p)) {
		return bad("metadata length %d does not fit the %d-byte payload", metaLen, len(p))
	}
	return p[8 : 8+metaLen], p[8+metaLen:], nil
}

// checkArrowKind checks that a message's header type fits the frame kind carrying it.
func checkArrowKind(k Kind, info arrowMsgInfo) error {
	switch {
	case k == KindSchema && info.headerType == arrowMsgSchema && info.bodyLength == 0:
		return nil
	case (k == KindBatch || k == KindRingBatch) && (info.headerType == arrowMsgRecordBatch || info.headerType == arrowMsgDictionaryBatch):
		return nil
	}
	return fmt.Errorf("%w: %v frame carries Arrow message type %d", ErrProtocol, k, info.headerType)
}

// parseArrowMeta reads the version, header type and body length of a flatbuffer Message.
func parseArrowMeta(m []byte) (info arrowMsgInfo, err error) {
	bad := func(format string, args ...any) (arrowMsgInfo, error) {
		return arrowMsgInfo{}, fmt.Errorf("%w: malformed Arrow message: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	if len(m) < 4 {
		return bad("metadata of %d bytes", len(m))
	}
	t := int64(binary.LittleEndian.Uint32(m))
	if t+4 > int64(len(m)) {
		return bad("root table offset %d outside the %d-byte metadata", t, len(m))
	}
	vt := t - int64(int32(binary.LittleEndian.Uint32(m[t:])))
	if vt < 0 || vt+4 > int64(len(m)) {
		return bad("vtable offset %d outside the metadata", vt)
	}
	vtSize := int64(binary.LittleEndian.Uint16(m[vt:]))
	tableSize := int64(binary.LittleEndian.Uint16(m[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vt+vtSize > int64(len(m)) || t+tableSize > int64(len(m)) {
		return bad("vtable of %d bytes or table of %d bytes outside the metadata", vtSize, tableSize)
	}
	// field returns the position of field i in the table, 0 if absent.
	field := func(i int64, size int64) (int64, bool) {
		at := vt + 4 + 2*i
		if at+2 > vt+vtSize {
			return 0, true
		}
		off := int64(binary.LittleEndian.Uint16(m[at:]))
		if off == 0 {
			return 0, true
		}
		if off+size > tableSize {
			return 0, false
		}
		return t + off, true
	}
	pos, ok := field(0, 2)
	if !ok {
		return bad("version field outside the table")
	}
	if pos != 0 {
		info.version = int16(binary.LittleEndian.Uint16(m[pos:]))
	}
	if pos, ok = field(1, 1); !ok {
		return bad("header_type field outside the table")
	}
	if pos != 0 {
		info.headerType = m[pos]
	}
	if pos, ok = field(3, 8); !ok {
		return bad("bodyLength field outside the table")
	}
	if pos != 0 {
		info.bodyLength = int64(binary.LittleEndian.Uint64(m[pos:]))
	}
	if info.version < 3 || info.version > 4 {
		return bad("metadata version %d, want V4 or V5", int(info.version)+1)
	}
	return info, nil
}
