package frontend

import (
	"bytes"
	"net"
	"sync"
)

// Capabilities the command phase supports beyond those go-mysql's Server advertises, which
// it keeps in an unexported field with no option to extend. go-sql-driver (since 1.8) drops
// any capability the server does not advertise, so without these its multiStatements=true
// would be silently ignored.
const (
	capLocalFiles      = 1 << 7  // CLIENT_LOCAL_FILES: LOAD DATA LOCAL INFILE
	capMultiStatements = 1 << 16 // CLIENT_MULTI_STATEMENTS
	capMultiResults    = 1 << 17 // CLIENT_MULTI_RESULTS
	extraCapabilities  = capLocalFiles | capMultiStatements | capMultiResults
)

// capabilityPatchConn is the connection handed to go-mysql for the connection phase. It
// ORs extraCapabilities into the capability flags of the first packet the server writes, the
// initial handshake (Protocol::HandshakeV10), and bounds what the client may send before the
// command phase (budget), which go-mysql would otherwise buffer whole.
type capabilityPatchConn struct {
	net.Conn
	once   sync.Once
	budget readBudget
}

func newCapabilityPatchConn(nc net.Conn) *capabilityPatchConn {
	c := &capabilityPatchConn{Conn: nc}
	c.budget.left.Store(handshakeReadLimit)
	return c
}

// Read is the connection's Read, within the budget.
func (c *capabilityPatchConn) Read(p []byte) (int, error) { return c.budget.read(c.Conn, p) }

// authenticated lifts the budget: command packets are bounded by max_allowed_packet.
func (c *capabilityPatchConn) authenticated() { c.budget.left.Store(-1) }

func (c *capabilityPatchConn) Write(p []byte) (int, error) {
	c.once.Do(func() { patchHandshakeCapabilities(p) })
	return c.Conn.Write(p)
}

// patchHandshakeCapabilities adds extraCapabilities to a HandshakeV10 packet (with its
// 4-byte header) in place. A packet of another shape is left alone.
func patchHandshakeCapabilities(p []byte) {
	// header(4) protocol_version(1)=10 server_version(NUL-terminated) connection_id(4)
	// auth_plugin_data_part_1(8) filler(1) capability_flags_lower(2) character_set(1)
	// status_flags(2) capability_flags_upper(2) …
	if len(p) < 5 || p[4] != 10 {
		return
	}
	nul := bytes.IndexByte(p[5:], 0)
	if nul < 0 {
		return
	}
	lower := 5 + nul + 1 + 4 + 8 + 1
	upper := lower + 2 + 1 + 2
	if upper+2 > len(p) {
		return
	}
	p[lower] |= byte(extraCapabilities & 0xff)
	p[lower+1] |= byte(extraCapabilities >> 8 & 0xff)
	p[upper] |= byte(extraCapabilities >> 16)
	p[upper+1] |= byte(extraCapabilities >> 24)
}
