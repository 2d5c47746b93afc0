package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// This file is a minimal msgpack encoder and decoder for the link's own control payloads.
// It allocates nothing on the encode side and, on the decode side, only what a caller keeps
// (strings). User payloads (request args, end stats) are validated with mpSkip and handed to
// the caller raw.

var errMsgpack = errors.New("malformed msgpack")

func mpAppendMapHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xde, byte(n>>8), byte(n))
	default:
		return append(dst, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func mpAppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xdc, byte(n>>8), byte(n))
	default:
		return append(dst, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func mpAppendStr(dst []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = append(dst, 0xda, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, s...)
}

func mpAppendBin(dst []byte, b []byte) []byte {
	n := len(b)
	switch {
	case n <= math.MaxUint8:
		dst = append(dst, 0xc4, byte(n))
	case n <= math.MaxUint16:
		dst = append(dst, 0xc5, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, b...)
}

func mpAppendUint(dst []byte, u uint64) []byte {
	switch {
	case u < 128:
		return append(dst, byte(u))
	case u <= math.MaxUint8:
		return append(dst, 0xcc, byte(u))
	case u <= math.MaxUint16:
		return append(dst, 0xcd, byte(u>>8), byte(u))
	case u <= math.MaxUint32:
		return append(dst, 0xce, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	default:
		return binary.BigEndian.AppendUint64(append(dst, 0xcf), u)
	}
}

func mpAppendInt(dst []byte, i int64) []byte {
	if i >= 0 {
		return mpAppendUint(dst, uint64(i))
	}
	switch {
	case i >= -32:
		return append(dst, byte(i))
	case i >= math.MinInt8:
		return append(dst, 0xd0, byte(i))
	case i >= math.MinInt16:
		return append(dst, 0xd1, byte(i>>8), byte(i))
	case i >= math.MinInt32:
		return append(dst, 0xd2, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
	default:
		return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(i))
	}
}

func mpAppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 0xc3)
	}
	return append(dst, 0xc2)
}

// mpReader decodes msgpack values from b in order.
type mpReader struct {
	b   []byte
	off int
}

func (r *mpReader) done() bool { return r.off >= len(r.b) }

func (r *mpReader) fail(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", errMsgpack, r.off, fmt.Sprintf(format, args...))
}

func (r *mpReader) need(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.off < n {
		return nil, r.fail("value needs %d more bytes, %d left", n, len(r.b)-r.off)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *mpReader) byte1() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.fail("unexpected end of input")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *mpReader) lenN(size int) (int, error) {
	p, err := r.need(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return int(p[0]), nil
	case 2:
		return int(binary.BigEndian.Uint16(p)), nil
	default:
		return int(binary.BigEndian.Uint32(p)), nil
	}
}

func (r *mpReader) readMapHeader() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), nil
	case c == 0xde:
		return r.lenN(2)
	case c == 0xdf:
		return r.lenN(4)
	}
	r.off--
	return 0, r.fail("want a map, found type byte %#02x", c)
}

func (r *mpReader) readArrayHeader() (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), nil
	case c == 0xdc:
		return r.lenN(2)
	case c == 0xdd:
		return r.lenN(4)
	}
	r.off--
	return 0, r.fail("want an array, found type byte %#02x", c)
}

// readStrBytes returns a string or binary value's bytes, aliasing the input.
func (r *mpReader) readStrBytes() ([]byte, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = r.lenN(1)
	case c == 0xda || c == 0xc5:
		n, err = r.lenN(2)
	case c == 0xdb || c == 0xc6:
		n, err = r.lenN(4)
	default:
		r.off--
		return nil, r.fail("want a string, found type byte %#02x", c)
	}
	if err != nil {
		return nil, err
	}
	return r.need(n)
}

func (r *mpReader) readString() (string, error) {
	b, err := r.readStrBytes()
	return string(b), err
}

func (r *mpReader) readUint() (uint64, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	if c < 0x80 {
		return uint64(c), nil
	}
	size := 0
	switch c {
	case 0xcc, 0xd0:
		size = 1
	case 0xcd, 0xd1:
		size = 2
	case 0xce, 0xd2:
		size = 4
	case 0xcf, 0xd3:
		size = 8
	default:
		r.off--
		return 0, r.fail("want an unsigned integer, found type byte %#02x", c)
	}
	p, err := r.need(size)
	if err != nil {
		return 0, err
	}
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	if c >= 0xd0 { // signed encodings are accepted when the value is not negative
		if p[0]&0x80 != 0 {
			return 0, r.fail("want an unsigned integer, found a negative one")
		}
	}
	return u, nil
}

func (r *mpReader) readBool() (bool, error) {
	c, err := r.byte1()
	if err != nil {
		return false, err
	}
	switch c {
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	}
	r.off--
	return false, r.fail("want a boolean, found type byte %#02x", c)
}

// skip steps over one complete value, nested ones included, without recursion; it fails on
// truncated input and on the reserved type byte 0xc1.
func (r *mpReader) skip() error {
	pending := 1 // values still to skip
	for pending > 0 {
		pending--
		c, err := r.byte1()
		if err != nil {
			return err
		}
		var n int
		switch {
		case c <= 0x7f || c >= 0xe0: // fixint
		case c&0xf0 == 0x80:
			pending += 2 * int(c&0x0f)
		case c&0xf0 == 0x90:
			pending += int(c & 0x0f)
		case c&0xe0 == 0xa0:
			_, err = r.need(int(c & 0x1f))
		case c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c == 0xc1:
			return r.fail("reserved type byte 0xc1")
		case c == 0xc4 || c == 0xd9:
			if n, err = r.lenN(1); err == nil {
				_, err = r.need(n)
			}
		case c == 0xc5 || c == 0xda:
			if n, err = r.lenN(2); err == nil {
				_, err = r.need(n)
			}
		case c == 0xc6 || c == 0xdb:
			if n, err = r.lenN(4); err == nil {
				_, err = r.need(n)
			}
		case c == 0xc7: // ext 8
			if n, err = r.lenN(1); err == nil {
				_, err = r.need(n + 1)
			}
		case c == 0xc8:
			if n, err = r.lenN(2); err == nil {
				_, err = r.need(n + 1)
			}
		case c == 0xc9:
			if n, err = r.lenN(4); err == nil {
				_, err = r.need(n + 1)
			}
		case c == 0xca:
			_, err = r.need(4)
		case c == 0xcb:
			_, err = r.need(8)
		case c == 0xcc || c == 0xd0:
			_, err = r.need(1)
		case c == 0xcd || c == 0xd1:
			_, err = r.need(2)
		case c == 0xce || c == 0xd2:
			_, err = r.need(4)
		case c == 0xcf || c == 0xd3:
			_, err = r.need(8)
		case c == 0xd4:
			_, err = r.need(2)
		case c == 0xd5:
			_, err = r.need(3)
		case c == 0xd6:
			_, err = r.need(5)
		case c == 0xd7:
			_, err = r.need(9)
		case c == 0xd8:
			_, err = r.need(17)
		case c == 0xdc:
			if n, err = r.lenN(2); err == nil {
				pending += n
			}
		case c == 0xdd:
			if n, err = r.lenN(4); err == nil {
				pending += n
			}
		case c == 0xde:
			if n, err = r.lenN(2); err == nil {
				pending += 2 * n
			}
		case c == 0xdf:
			if n, err = r.lenN(4); err == nil {
				pending += 2 * n
			}
		}
		if err != nil {
			return err
		}
		// Every pending value needs at least one byte: more pending values than bytes left
		// means the input is truncated, and stopping now bounds the loop by the input size.
		if pending > len(r.b)-r.off {
			return r.fail("%d values announced, only %d bytes left", pending, len(r.b)-r.off)
		}
	}
	return nil
}

// readRaw returns the bytes of the next complete value, aliasing the input.
func (r *mpReader) readRaw() ([]byte, error) {
	start := r.off
	if err := r.skip(); err != nil {
		return nil, err
	}
	return r.b[start:r.off:r.off], nil
}

// mpValidMap reports whether b is exactly one msgpack map value.
func mpValidMap(b []byte) error {
	r := mpReader{b: b}
	if _, err := r.readMapHeader(); err != nil {
		return err
	}
	r.off = 0
	if err := r.skip(); err != nil {
		return err
	}
	if !r.done() {
		return r.fail("%d trailing bytes after the map", len(b)-r.off)
	}
	return nil
}
