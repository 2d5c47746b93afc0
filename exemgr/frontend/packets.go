package frontend

import (
	"io"
)

// Protocol constants of the command phase.
const (
	maxPayload = 1<<24 - 1 // a packet of this many bytes is continued by the next
	// flushAt is the buffered size at which packetWriter writes to the socket: large enough
	// to amortise the syscall over hundreds of rows, small enough to bound a connection's
	// memory.
	flushAt = 64 << 10
	// keepCap is the largest buffer kept after a flush; a larger one (grown by a huge row)
	// is dropped so an idle connection holds little memory.
	keepCap = 1 << 20
	// initialCap is a new connection's buffer: enough for small answers; a result set grows
	// it to about flushAt.
	initialCap = 4 << 10

	statusAutocommit  uint16 = 0x0002
	statusMoreResults uint16 = 0x0008

	binaryCollation = 63 // the "binary" character set, for numbers and dates
	// defaultCollation is utf8mb4_bin: colink compares and sorts strings byte-wise
	// everywhere (exec, constant folding), so the handshake and every string column
	// advertise the binary collation rather than MySQL's case-insensitive default.
	defaultCollation     = 46
	defaultCollationName = "utf8mb4_bin"

	headerOK  = 0x00
	headerEOF = 0xfe
	headerErr = 0xff
	nullValue = 0xfb
)

// packetWriter frames MySQL packets into a buffer and writes the buffer to the connection
// when it holds flushAt bytes or on flush. The first write error sticks: every later call
// returns it, so a caller may write a whole response and check once.
type packetWriter struct {
	w     io.Writer
	buf   []byte
	seq   uint8
	start int // offset of the open packet's header
	err   error
}

func newPacketWriter(w io.Writer) *packetWriter {
	return &packetWriter{w: w, buf: make([]byte, 0, initialCap)}
}

// reset starts a response whose first packet has sequence number seq.
func (w *packetWriter) reset(seq uint8) { w.seq = seq }

// begin opens a packet; the payload is appended to w.buf until end.
func (w *packetWriter) begin() {
	w.start = len(w.buf)
	w.buf = append(w.buf, 0, 0, 0, 0)
}

// end closes the open packet, splitting a payload of maxPayload bytes or more into several
// packets as the protocol requires, and flushes if the buffer is full.
func (w *packetWriter) end() error {
	n := len(w.buf) - w.start - 4
	if n < maxPayload {
		w.buf[w.start] = byte(n)
		w.buf[w.start+1] = byte(n >> 8)
		w.buf[w.start+2] = byte(n >> 16)
		w.buf[w.start+3] = w.seq
		w.seq++
	} else {
		payload := append([]byte(nil), w.buf[w.start+4:]...)
		w.buf = w.buf[:w.start]
		for {
			chunk := min(len(payload), maxPayload)
			w.buf = append(w.buf, byte(chunk), byte(chunk>>8), byte(chunk>>16), w.seq)
			w.buf = append(w.buf, payload[:chunk]...)
			w.seq++
			payload = payload[chunk:]
			if chunk < maxPayload {
				break // a payload that is a multiple of maxPayload ends with an empty packet
			}
		}
	}
	if len(w.buf) >= flushAt {
		return w.flush()
	}
	return w.err
}

// flush writes the buffered packets.
func (w *packetWriter) flush() error {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > keepCap {
		w.buf = make([]byte, 0, initialCap)
	}
	return w.err
}

// ok writes an OK packet.
func (w *packetWriter) ok(affected, insertID uint64, status, warnings uint16, info string) error {
	w.begin()
	w.buf = append(w.buf, headerOK)
	w.buf = appendLenEncInt(w.buf, affected)
	w.buf = appendLenEncInt(w.buf, insertID)
	w.buf = append(w.buf, byte(status), byte(status>>8), byte(warnings), byte(warnings>>8))
	if info != "" {
		// Length-encoded, as MySQL and MariaDB servers send it (the documented string<EOF>
		// form makes libmariadb report a malformed packet).
		w.buf = appendLenEncString(w.buf, info)
	}
	return w.end()
}

// eof writes an EOF packet (the server never offers CLIENT_DEPRECATE_EOF).
func (w *packetWriter) eof(status, warnings uint16) error {
	w.begin()
	w.buf = append(w.buf, headerEOF, byte(warnings), byte(warnings>>8), byte(status), byte(status>>8))
	return w.end()
}

// errPacket writes an ERR packet.
func (w *packetWriter) errPacket(code uint16, state, message string) error {
	w.begin()
	w.buf = append(w.buf, headerErr, byte(code), byte(code>>8), '#')
	w.buf = append(w.buf, state...)
	w.buf = append(w.buf, message...)
	return w.end()
}

// raw writes a packet whose payload is p.
func (w *packetWriter) raw(p []byte) error {
	w.begin()
	w.buf = append(w.buf, p...)
	return w.end()
}

// columnCount writes a result set's first packet.
func (w *packetWriter) columnCount(n int) error {
	w.begin()
	w.buf = appendLenEncInt(w.buf, uint64(n))
	return w.end()
}

// columnDef writes a column definition (Protocol::ColumnDefinition41). stringCollation is the
// collation for string columns that do not name one; withDefault adds the default-value
// field that COM_FIELD_LIST responses carry (always NULL here).
func (w *packetWriter) columnDef(c *Column, stringCollation uint16, withDefault bool) error {
	w.begin()
	w.buf = appendLenEncString(w.buf, "def")
	w.buf = appendLenEncString(w.buf, c.Database)
	w.buf = appendLenEncString(w.buf, c.Table)
	w.buf = appendLenEncString(w.buf, c.OrgTable)
	w.buf = appendLenEncString(w.buf, c.Name)
	w.buf = appendLenEncString(w.buf, c.OrgName)
	collation := c.Charset
	length := c.Length
	if collation == 0 {
		switch c.Type {
		case TypeString, TypeVarString, TypeBlob:
			collation = stringCollation
			length *= mbMaxLen(collation)
		default:
			collation = binaryCollation
		}
	}
	w.buf = append(w.buf, 0x0c,
		byte(collation), byte(collation>>8),
		byte(length), byte(length>>8), byte(length>>16), byte(length>>24),
		byte(c.Type),
		byte(c.Flags), byte(c.Flags>>8),
		c.Decimals,
		0, 0)
	if withDefault {
		w.buf = append(w.buf, nullValue)
	}
	return w.end()
}

// mbMaxLen is the longest character of a collation's character set, in bytes: MySQL's
// column lengths for strings are in bytes.
func mbMaxLen(collation uint16) uint32 {
	switch {
	case collation == 33 || collation == 83 || (collation >= 192 && collation <= 215):
		return 3 // utf8mb3
	case collation == 45 || collation == 46 || (collation >= 224 && collation <= 247) || collation >= 255:
		return 4 // utf8mb4
	case collation == 8 || collation == 47 || collation == 48 || collation == 31 || collation == binaryCollation:
		return 1 // latin1, binary
	}
	return 4
}

func appendLenEncInt(b []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return append(b, 0xfe, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendLenEncString(b []byte, s string) []byte {
	return append(appendLenEncInt(b, uint64(len(s))), s...)
}

func appendLenEncBytes(b []byte, s []byte) []byte {
	return append(appendLenEncInt(b, uint64(len(s))), s...)
}
