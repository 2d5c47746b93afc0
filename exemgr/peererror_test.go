package exemgr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPeerErrorNamesThePeerOnce: the layers under a statement's peer error each name the
// primproc; the message the client reads names it once.
func TestPeerErrorNamesThePeerOnce(t *testing.T) {
	peer := "tcp://127.0.0.1:43315"
	cause := errors.New("handshake: link connection closed: write: i/o timeout")
	err := &peerError{peer: peer,
		why: fmt.Errorf("link connection closed: peer %s closed the connection", peer),
		err: fmt.Errorf("primproc %s: stats: peer down: %s: %w", peer, peer, cause)}
	msg := err.Error()
	if n := strings.Count(msg, peer); n != 1 {
		t.Errorf("%q names the peer %d times, want once", msg, n)
	}
	if !strings.Contains(msg, "stats: peer down: handshake") || !errors.Is(err, cause) {
		t.Errorf("%q lost the cause", msg)
	}
}
