package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is the fixed size of a frame header in bytes.
const HeaderSize = 16

// The frame header's constants.
const (
	magic0 = 'C' // first magic byte
	magic1 = 'L' // second magic byte

	// Version is the protocol version this build speaks.
	Version = 1

	// MaxFrameCap is the largest payload length the protocol allows; a peer announces its own,
	// smaller limit in its hello.
	MaxFrameCap = 1 << 30
	// DefaultMaxFrame is the receive limit announced by default.
	DefaultMaxFrame = 64 << 20
	// MinMaxFrame is the smallest receive limit a peer may announce.
	MinMaxFrame = 64 << 10
	// HandshakeMaxFrame bounds every frame received before the handshake completes.
	HandshakeMaxFrame = 64 << 10
)

// Kind says what a frame carries.
type Kind uint8

// The frame kinds. Numbers are part of the wire format.
const (
	KindHello   Kind = 1  // handshake message (stream 0), msgpack map
	KindRequest Kind = 2  // opens a stream: msgpack map {method, args, timeout_us}
	KindSchema  Kind = 3  // Arrow IPC schema message
	KindBatch   Kind = 4  // Arrow IPC record batch or dictionary batch message
	KindEnd     Kind = 5  // sender's half of the stream is complete: msgpack map (stats)
	KindError   Kind = 6  // msgpack map {code, message}; stream 0 = the whole connection
	KindCredit  Kind = 7  // msgpack uint: bytes the receiver grants the sender
	KindCancel  Kind = 8  // msgpack map {reason}: the sender abandons the stream
	KindPing    Kind = 9  // msgpack uint nonce (stream 0)
	KindPong    Kind = 10 // the ping's nonce echoed (stream 0)
	// KindRingBatch is a BATCH whose body lies in the shared-memory ring: a descriptor
	// (generation, position, length) and the Arrow message's head. Only on a connection
	// that negotiated shared memory.
	KindRingBatch Kind = 11

	kindMax = KindRingBatch
)

var kindNames = [...]string{
	KindHello: "HELLO", KindRequest: "REQUEST", KindSchema: "SCHEMA", KindBatch: "BATCH",
	KindEnd: "END", KindError: "ERROR", KindCredit: "CREDIT", KindCancel: "CANCEL",
	KindPing: "PING", KindPong: "PONG", KindRingBatch: "RBATCH",
}

func (k Kind) String() string {
	if k >= 1 && k <= kindMax {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// isData reports whether frames of kind k carry Arrow data and consume flow-control credit.
func (k Kind) isData() bool { return k == KindSchema || k == KindBatch || k == KindRingBatch }

// Flags modify a frame. Undefined bits must be zero.
type Flags uint16

// FlagFin, on a REQUEST, says the client sends nothing more on the stream (an implicit
// empty END). It is the only flag defined in version 1 and is valid on REQUEST only.
const FlagFin Flags = 1 << 0

// Header is a decoded frame header.
type Header struct {
	Version uint8
	Kind    Kind
	Flags   Flags
	Stream  uint32 // 0 addresses the connection itself
	Length  uint32 // payload bytes following the header
}

// ErrProtocol is wrapped by every error that a peer's malformed or illegal input causes.
var ErrProtocol = errors.New("protocol violation")

// ErrVersion is wrapped by errors about a peer speaking another protocol version.
var ErrVersion = errors.New("protocol version mismatch")

// ErrIncomplete is returned by DecodeFrame when the buffer holds only part of a frame.
var ErrIncomplete = errors.New("incomplete frame")

// PutHeader writes h into b[:HeaderSize] with the magic and h.Version (Version if zero).
func PutHeader(b []byte, h Header) {
	_ = b[HeaderSize-1]
	v := h.Version
	if v == 0 {
		v = Version
	}
	b[0], b[1], b[2], b[3] = magic0, magic1, v, byte(h.Kind)
	binary.LittleEndian.PutUint16(b[4:], uint16(h.Flags))
	b[6], b[7] = 0, 0
	binary.LittleEndian.PutUint32(b[8:], h.Stream)
	binary.LittleEndian.PutUint32(b[12:], h.Length)
}

// AppendHeader appends h's encoding to dst.
func AppendHeader(dst []byte, h Header) []byte {
	var b [HeaderSize]byte
	PutHeader(b[:], h)
	return append(dst, b[:]...)
}

// DecodeHeader parses and validates one header from b (at least HeaderSize bytes). It checks
// the magic, the version, the kind, the flags, the reserved bytes, the stream-id rule of the
// kind and the payload length against maxFrame. A wrong version with the right magic gives
// an error wrapping ErrVersion and the header, so a handshake can still read the payload;
// every other failure wraps ErrProtocol.
func DecodeHeader(b []byte, maxFrame uint32) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header needs %d bytes, have %d", ErrIncomplete, HeaderSize, len(b))
	}
	if b[0] != magic0 || b[1] != magic1 {
		return Header{}, fmt.Errorf("%w: bad magic %#02x %#02x (want 'C' 'L'): not a colink peer", ErrProtocol, b[0], b[1])
	}
	h := Header{
		Version: b[2],
		Kind:    Kind(b[3]),
		Flags:   Flags(binary.LittleEndian.Uint16(b[4:])),
		Stream:  binary.LittleEndian.Uint32(b[8:]),
		Length:  binary.LittleEndian.Uint32(b[12:]),
	}
	if h.Length > maxFrame {
		return h, fmt.Errorf("%w: %v frame of %d bytes exceeds the maximum frame size %d", ErrProtocol, h.Kind, h.Length, maxFrame)
	}
	if h.Version != Version {
		return h, fmt.Errorf("%w: peer speaks protocol version %d, this build speaks %d", ErrVersion, h.Version, Version)
	}
	if h.Kind < KindHello || h.Kind > kindMax {
		return h, fmt.Errorf("%w: unknown frame kind %d", ErrProtocol, uint8(h.Kind))
	}
	if b[6] != 0 || b[7] != 0 {
		return h, fmt.Errorf("%w: reserved header bytes are %#02x %#02x, want zero", ErrProtocol, b[6], b[7])
	}
	if h.Flags&^FlagFin != 0 || (h.Flags&FlagFin != 0 && h.Kind != KindRequest) {
		return h, fmt.Errorf("%w: flags %#04x not valid on a %v frame", ErrProtocol, uint16(h.Flags), h.Kind)
	}
	switch h.Kind {
	case KindHello, KindPing, KindPong:
		if h.Stream != 0 {
			return h, fmt.Errorf("%w: %v frame on stream %d, must be on stream 0", ErrProtocol, h.Kind, h.Stream)
		}
	case KindError:
		// Any stream: 0 is a connection error.
	default:
		if h.Stream == 0 {
			return h, fmt.Errorf("%w: %v frame on stream 0", ErrProtocol, h.Kind)
		}
	}
	return h, nil
}

// DecodeFrame decodes the first frame in b: its header, its payload (aliasing b) and the
// number of bytes it occupies. It returns an error wrapping ErrIncomplete when b holds only
// a prefix of a valid frame. DecodeFrame is a pure function of its input.
func DecodeFrame(b []byte, maxFrame uint32) (h Header, payload []byte, n int, err error) {
	h, err = DecodeHeader(b, maxFrame)
	if err != nil {
		return h, nil, 0, err
	}
	end := HeaderSize + int(h.Length)
	if len(b) < end {
		return h, nil, 0, fmt.Errorf("%w: %v frame needs %d payload bytes, have %d", ErrIncomplete, h.Kind, h.Length, len(b)-HeaderSize)
	}
	return h, b[HeaderSize:end:end], end, nil
}

// AppendFrame appends a whole frame (header and payload) to dst.
func AppendFrame(dst []byte, kind Kind, flags Flags, stream uint32, payload []byte) []byte {
	dst = AppendHeader(dst, Header{Kind: kind, Flags: flags, Stream: stream, Length: uint32(len(payload))})
	return append(dst, payload...)
}
