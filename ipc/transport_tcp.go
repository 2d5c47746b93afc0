//go:build !colink_unix && !colink_shm

package ipc

// DefaultTransport is the transport used when none is configured. Build with
// -tags colink_unix to make it TransportUnix, -tags colink_shm TransportShm.
const DefaultTransport = TransportTCP
