//go:build !colink_unix

package ipc

// DefaultTransport is the transport used when none is configured. Build with
// -tags colink_unix to make it TransportUnix.
const DefaultTransport = TransportTCP
