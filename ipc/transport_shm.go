//go:build colink_shm

package ipc

// DefaultTransport is the transport used when none is configured; this build has the
// colink_shm tag. Without it the default is TransportTCP (TransportUnix with colink_unix).
const DefaultTransport = TransportShm
