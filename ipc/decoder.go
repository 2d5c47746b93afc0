package ipc

import (
	"errors"
	"fmt"
)

// readBufSize is the size of a connection's read buffer. Small frames are parsed out of it,
// several per read(2); a large payload is read straight into a pooled buffer of its own.
const readBufSize = 64 << 10

// bufferPool is where received payloads live: *bufpool.Pool, or a test's pool.
type bufferPool interface {
	Get(n int) []byte // a buffer of length n, contents unspecified
	Put(b []byte)     // gives a buffer back; nothing may use it afterwards
}

// inFrame is a frame as received. payload aliases the read buffer (valid until the
// decoder's next space call) unless owned is set, in which case payload is owned[:len] and
// the receiver of the frame must give owned back to the pool (directly or by handing it to
// an Arrow buffer).
type inFrame struct {
	h       Header
	payload []byte
	owned   []byte
	// body is an RBATCH's body in the shared-memory ring, once the core accepted its
	// descriptor: it goes back to the ring (ringRx.release), not to the pool.
	body []byte
}

// decoder assembles frames out of the bytes a connection receives, doing no I/O itself:
// the reader asks where the next bytes should go (space), reads into that slice, reports
// how many arrived (filled), and takes the complete frames one by one (next). Small frames
// are parsed out of the read buffer, several per read; a data frame (SCHEMA, BATCH), or any
// payload that does not fit the read buffer, is assembled in a pooled buffer of its own,
// and a large remainder of it is read straight into that buffer.
//
// It belongs to whoever reads the connection (one goroutine at a time).
//
// Invariant: buf[r:w] holds received bytes not yet parsed; while part is set, the first of
// them continue the payload assembled in powned (pgot bytes so far). After next has
// reported that it needs more bytes, space never returns an empty slice.
type decoder struct {
	pool     bufferPool
	buf      []byte
	r, w     int
	maxFrame uint32 // frames longer than this are a protocol error

	part   bool   // a pooled payload is being assembled
	ph     Header // its header
	powned []byte // its buffer, of length ph.Length
	pgot   int    // its bytes received so far
	direct bool   // the last space was powned's tail

	// quoteVersion (during the handshake): a header of another protocol version is
	// returned with its payload once that is buffered, so the peer's own words (its hello
	// or error) can be quoted.
	quoteVersion bool
}

func newDecoder(pool bufferPool) decoder {
	return decoder{pool: pool, buf: make([]byte, readBufSize), maxFrame: HandshakeMaxFrame, quoteVersion: true}
}

// space returns where the next received bytes should go.
func (d *decoder) space() []byte {
	if d.part && d.r == d.w {
		if rest := int(d.ph.Length) - d.pgot; rest >= len(d.buf)/2 {
			// Large remainders go straight into the payload; small ones through the read
			// buffer, to pick up the frames behind them in the same read.
			d.direct = true
			return d.powned[d.pgot:]
		}
	}
	d.direct = false
	if d.r > 0 {
		n := copy(d.buf, d.buf[d.r:d.w])
		d.r, d.w = 0, n
	}
	return d.buf[d.w:]
}

// filled records that n bytes arrived in the slice space last returned.
func (d *decoder) filled(n int) {
	if d.direct {
		d.pgot += n
	} else {
		d.w += n
	}
}

// next returns the next complete frame; ok is false when more bytes are needed. An error
// is final: a byte stream that broke the framing cannot be resynchronised. With it comes
// the header, if one was decoded (and, for another version while quoteVersion is set, the
// payload, aliasing the read buffer).
func (d *decoder) next() (f inFrame, ok bool, err error) {
	if d.part {
		if d.r < d.w {
			k := copy(d.powned[d.pgot:], d.buf[d.r:d.w])
			d.pgot += k
			d.r += k
		}
		n := int(d.ph.Length)
		if d.pgot < n {
			return inFrame{}, false, nil
		}
		f = inFrame{h: d.ph, payload: d.powned[:n], owned: d.powned}
		d.part, d.powned, d.pgot = false, nil, 0
		return f, true, nil
	}
	avail := d.w - d.r
	if avail < HeaderSize {
		return inFrame{}, false, nil
	}
	h, err := DecodeHeader(d.buf[d.r:d.w], d.maxFrame)
	if err != nil {
		if end := HeaderSize + int(h.Length); d.quoteVersion && errors.Is(err, ErrVersion) && end <= len(d.buf) {
			if avail < end {
				return inFrame{}, false, nil // wait for the payload, to quote it
			}
			return inFrame{h: h, payload: d.buf[d.r+HeaderSize : d.r+end]}, false, err
		}
		return inFrame{h: h}, false, err
	}
	n := int(h.Length)
	if !h.Kind.isData() && HeaderSize+n <= len(d.buf) {
		if avail < HeaderSize+n {
			return inFrame{}, false, nil
		}
		p := d.buf[d.r+HeaderSize : d.r+HeaderSize+n : d.r+HeaderSize+n]
		d.r += HeaderSize + n
		return inFrame{h: h, payload: p}, true, nil
	}
	// A pooled payload: take what is buffered now, the rest as it comes.
	d.r += HeaderSize
	d.part, d.ph, d.pgot = true, h, 0
	d.powned = d.pool.Get(n)
	return d.next()
}

// truncated describes the frame the byte stream ended inside of, or returns nil if it
// ended between frames. A header of another version still waiting for its payload (see
// quoteVersion) is reported as that version error.
func (d *decoder) truncated() error {
	avail := d.w - d.r
	switch {
	case d.part:
		return fmt.Errorf("%w: connection closed inside a %v frame (%d of %d payload bytes)", ErrProtocol, d.ph.Kind, d.pgot, d.ph.Length)
	case avail == 0:
		return nil
	case avail < HeaderSize:
		return fmt.Errorf("%w: connection closed inside a frame header (%d of %d bytes)", ErrProtocol, avail, HeaderSize)
	}
	h, err := DecodeHeader(d.buf[d.r:d.w], d.maxFrame)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: connection closed inside a %v frame (%d of %d payload bytes)", ErrProtocol, h.Kind, avail-HeaderSize, h.Length)
}

// release gives back the buffer of a payload being assembled. Only the reader may call it:
// a read may be filling that buffer.
func (d *decoder) release() {
	if d.part {
		d.pool.Put(d.powned)
		d.part, d.powned, d.pgot, d.direct = false, nil, 0, false
	}
}

// hasFrame reports whether a complete frame is buffered, so that next would return it
// without another read.
func (d *decoder) hasFrame() bool {
	avail := d.w - d.r
	if d.part {
		return d.pgot+avail >= int(d.ph.Length)
	}
	if avail < HeaderSize {
		return false
	}
	b := d.buf[d.r:]
	n := int(uint32(b[12]) | uint32(b[13])<<8 | uint32(b[14])<<16 | uint32(b[15])<<24)
	return avail >= HeaderSize+n
}

// mayHaveFrame reports whether next could return something without another read: a frame,
// or an error about a header.
func (d *decoder) mayHaveFrame() bool {
	if d.part {
		return d.pgot+d.w-d.r >= int(d.ph.Length)
	}
	return d.w-d.r >= HeaderSize
}
