package ipc

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// readBufSize is the size of a connection's read buffer. Small frames are parsed out of it,
// several per read(2); a large payload is read straight into a pooled buffer of its own.
const readBufSize = 64 << 10

// frameReader reads frames from a connection. It is used by one goroutine.
type frameReader struct {
	io       *sockIO
	pool     *BufferPool
	buf      []byte
	r, w     int    // buf[r:w] is read but unparsed
	maxFrame uint32 // frames longer than this are a protocol error

	lastRead  *atomic.Int64 // unix nanos of the last read that returned data
	bytesIn   atomic.Uint64
	framesIn  atomic.Uint64
	truncated bool // set when the connection ended inside a frame
}

func newFrameReader(sio *sockIO, pool *BufferPool, lastRead *atomic.Int64) *frameReader {
	return &frameReader{io: sio, pool: pool, buf: make([]byte, readBufSize), maxFrame: HandshakeMaxFrame, lastRead: lastRead}
}

// fill reads at least need bytes into buf[w:], compacting first if needed.
func (fr *frameReader) fill(need int) error {
	if fr.w-fr.r >= need {
		return nil
	}
	if fr.r > 0 {
		n := copy(fr.buf, fr.buf[fr.r:fr.w])
		fr.r, fr.w = 0, n
	}
	for fr.w < need {
		n, err := fr.io.Read(fr.buf[fr.w:])
		if n > 0 {
			fr.w += n
			fr.bytesIn.Add(uint64(n))
			fr.lastRead.Store(time.Now().UnixNano())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// inFrame is a frame as read. payload aliases the read buffer (valid until the next call to
// next) unless owned is set, in which case payload is owned[:len] and the receiver of the
// frame must give owned back to the pool (directly or by handing it to an Arrow buffer).
type inFrame struct {
	h       Header
	payload []byte
	owned   []byte
}

// next reads the next frame. Data frames (SCHEMA, BATCH) and any payload that does not fit
// the read buffer are returned in pooled memory.
func (fr *frameReader) next() (inFrame, error) {
	var f inFrame
	if err := fr.fill(HeaderSize); err != nil {
		if errors.Is(err, io.EOF) && fr.w > fr.r {
			fr.truncated = true
			return f, fmt.Errorf("%w: connection closed inside a frame header (%d of %d bytes)", ErrProtocol, fr.w-fr.r, HeaderSize)
		}
		return f, err
	}
	h, err := DecodeHeader(fr.buf[fr.r:fr.w], fr.maxFrame)
	if err != nil {
		return inFrame{h: h}, err
	}
	fr.r += HeaderSize
	f.h = h
	n := int(h.Length)
	if !h.Kind.isData() && n <= len(fr.buf) {
		if err := fr.fill(n); err != nil {
			return f, fr.truncatedErr(err, h, fr.w-fr.r)
		}
		f.payload = fr.buf[fr.r : fr.r+n : fr.r+n]
		fr.r += n
		fr.framesIn.Add(1)
		return f, nil
	}
	// Pooled payload: take what is buffered, then read the rest, straight into the payload
	// when it is large, through the read buffer when it is small (to pick up the frames
	// behind it in the same syscall).
	owned := fr.pool.Get(n)
	got := copy(owned, fr.buf[fr.r:fr.w])
	fr.r += got
	for got < n {
		rest := n - got
		if rest >= len(fr.buf)/2 {
			m, err := fr.io.Read(owned[got:n])
			if m > 0 {
				got += m
				fr.bytesIn.Add(uint64(m))
				fr.lastRead.Store(time.Now().UnixNano())
			}
			if err != nil {
				fr.pool.Put(owned)
				return f, fr.truncatedErr(err, h, got)
			}
			continue
		}
		if err := fr.fill(rest); err != nil {
			fr.pool.Put(owned)
			return f, fr.truncatedErr(err, h, got+fr.w-fr.r)
		}
		got += copy(owned[got:n], fr.buf[fr.r:fr.w])
		fr.r += rest
	}
	f.payload, f.owned = owned[:n], owned
	fr.framesIn.Add(1)
	return f, nil
}

func (fr *frameReader) truncatedErr(err error, h Header, got int) error {
	if errors.Is(err, io.EOF) {
		fr.truncated = true
		return fmt.Errorf("%w: connection closed inside a %v frame (%d of %d payload bytes)", ErrProtocol, h.Kind, got, h.Length)
	}
	return err
}
