//go:build colink_unix && !colink_shm

package ipc

// DefaultTransport is the transport used when none is configured; this build has the
// colink_unix tag. Without it the default is TransportTCP.
const DefaultTransport = TransportUnix
