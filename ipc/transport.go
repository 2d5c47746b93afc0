package ipc

import "fmt"

// Transport selects the socket kind a client uses for a peer.
type Transport string

// The transports. DefaultTransport, set by build tag, is the compiled-in default.
const (
	TransportTCP  Transport = "tcp"  // always TCP
	TransportUnix Transport = "unix" // always the peer's unix socket; the peer must be local
	TransportAuto Transport = "auto" // the unix socket for a local peer, else (or on failure) TCP
)

// ParseTransport parses "tcp", "unix" or "auto"; "" gives DefaultTransport.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case "":
		return DefaultTransport, nil
	case TransportTCP, TransportUnix, TransportAuto:
		return Transport(s), nil
	}
	return "", fmt.Errorf("transport %q: want tcp, unix or auto", s)
}
