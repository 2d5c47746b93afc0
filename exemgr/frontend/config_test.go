package frontend

import (
	"strings"
	"testing"

	"github.com/colinkdb/colink/internal/buildinfo"
)

func TestServerVersionFor(t *testing.T) {
	stamped := buildinfo.Info{Version: "v0.0.0-20261202192456-4a845b37cc16", Revision: "4a845b37cc16f475c30f23248a190cd8638414cc", Modified: true, GoVersion: "go1.26.8"}
	if got, want := ServerVersionFor(stamped), "8.0.11-colink-4a845b37cc16-dirty"; got != want {
		t.Errorf("ServerVersionFor(stamped) = %q, want %q", got, want)
	}
	if got := VersionID(ServerVersionFor(stamped)); got != 80011 {
		t.Errorf("VersionID of a stamped version: %d, want 80011 (versioned comments)", got)
	}
	if got := ServerVersionFor(buildinfo.Info{}); got != DefaultServerVersion {
		t.Errorf("unstamped: %q, want %q", got, DefaultServerVersion)
	}
	if got := VersionCommentFor(stamped); !strings.HasPrefix(got, "colink v0.0.0-") || !strings.Contains(got, "rev 4a845b37cc16+dirty") {
		t.Errorf("VersionCommentFor: %q", got)
	}
}
