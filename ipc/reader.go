package ipc

import (
	"errors"
	"fmt"
	"io"
	"os"
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

	// A pooled payload being read: kept across a timed-out read.
	part   bool
	ph     Header
	powned []byte
	pgot   int
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

// hasFrame reports whether a complete non-data frame is buffered, so reading it would not
// block.
func (fr *frameReader) hasFrame() bool {
	avail := fr.w - fr.r
	if fr.part || avail < HeaderSize {
		return false
	}
	n := int(uint32(fr.buf[fr.r+12]) | uint32(fr.buf[fr.r+13])<<8 | uint32(fr.buf[fr.r+14])<<16 | uint32(fr.buf[fr.r+15])<<24)
	return avail >= HeaderSize+n
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
// the read buffer are returned in pooled memory. A read that times out (a read deadline set
// to preempt the reading goroutine) leaves a partly read frame in place: the next call
// resumes it.
func (fr *frameReader) next() (inFrame, error) {
	if !fr.part {
		if err := fr.fill(HeaderSize); err != nil {
			if errors.Is(err, io.EOF) && fr.w > fr.r {
				fr.truncated = true
				return inFrame{}, fmt.Errorf("%w: connection closed inside a frame header (%d of %d bytes)", ErrProtocol, fr.w-fr.r, HeaderSize)
			}
			return inFrame{}, err
		}
		h, err := DecodeHeader(fr.buf[fr.r:fr.w], fr.maxFrame)
		if err != nil {
			return inFrame{h: h}, err
		}
		n := int(h.Length)
		if !h.Kind.isData() && HeaderSize+n <= len(fr.buf) {
			if err := fr.fill(HeaderSize + n); err != nil {
				return inFrame{h: h}, fr.truncatedErr(err, h, fr.w-fr.r-HeaderSize)
			}
			p := fr.buf[fr.r+HeaderSize : fr.r+HeaderSize+n : fr.r+HeaderSize+n]
			fr.r += HeaderSize + n
			fr.framesIn.Add(1)
			return inFrame{h: h, payload: p}, nil
		}
		// Pooled payload: take what is buffered, then read the rest.
		fr.r += HeaderSize
		fr.part, fr.ph = true, h
		fr.powned = fr.pool.Get(n)
		fr.pgot = copy(fr.powned, fr.buf[fr.r:fr.w])
		fr.r += fr.pgot
	}
	h, owned := fr.ph, fr.powned
	n := int(h.Length)
	for fr.pgot < n {
		rest := n - fr.pgot
		// Large remainders go straight into the payload; small ones through the read buffer,
		// to pick up the frames behind them in the same syscall.
		if rest >= len(fr.buf)/2 {
			m, err := fr.io.Read(owned[fr.pgot:n])
			if m > 0 {
				fr.pgot += m
				fr.bytesIn.Add(uint64(m))
				fr.lastRead.Store(time.Now().UnixNano())
			}
			if err != nil {
				return inFrame{h: h}, fr.partialErr(err, h)
			}
			continue
		}
		if err := fr.fill(rest); err != nil {
			return inFrame{h: h}, fr.partialErr(err, h)
		}
		fr.pgot += copy(owned[fr.pgot:n], fr.buf[fr.r:fr.w])
		fr.r += rest
	}
	fr.part, fr.powned, fr.pgot = false, nil, 0
	fr.framesIn.Add(1)
	return inFrame{h: h, payload: owned[:n], owned: owned}, nil
}

// partialErr handles an error inside a pooled payload: a timeout keeps the partial frame for
// the next call; anything else gives the buffer back.
func (fr *frameReader) partialErr(err error, h Header) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	got := fr.pgot
	fr.pool.Put(fr.powned)
	fr.part, fr.powned, fr.pgot = false, nil, 0
	return fr.truncatedErr(err, h, got)
}

func (fr *frameReader) truncatedErr(err error, h Header, got int) error {
	if errors.Is(err, io.EOF) {
		fr.truncated = true
		return fmt.Errorf("%w: connection closed inside a %v frame (%d of %d payload bytes)", ErrProtocol, h.Kind, got, h.Length)
	}
	return err
}
