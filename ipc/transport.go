package ipc

import "fmt"

// Transport selects how a client reaches a peer.
type Transport string

// The transports. DefaultTransport, set by build tag, is the compiled-in default.
const (
	TransportTCP  Transport = "tcp"  // always TCP
	TransportUnix Transport = "unix" // always the peer's unix socket; the peer must be local
	// TransportShm is the peer's unix socket with batch bodies in shared memory (memfd
	// rings, Linux); a peer that does not offer shared memory gets the plain unix socket.
	// The peer must be local.
	TransportShm  Transport = "shm"
	TransportAuto Transport = "auto" // for a local peer shm, else unix, else (or remote) TCP
)

// ParseTransport parses "tcp", "unix", "shm" or "auto"; "" gives DefaultTransport.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case "":
		return DefaultTransport, nil
	case TransportTCP, TransportUnix, TransportShm, TransportAuto:
		return Transport(s), nil
	}
	return "", fmt.Errorf("transport %q: want tcp, unix, shm or auto", s)
}

// wantsShm reports whether the transport asks a unix peer for shared memory.
func (t Transport) wantsShm() bool { return t == TransportShm || t == TransportAuto }
