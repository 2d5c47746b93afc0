// Package buildinfo owns what a colink binary knows of its own build: the module version,
// the VCS revision and dirty flag that `go build` stamps into it, and the Go version. Every
// binary's --version, the server's @@version and @@version_comment, and a benchmark run's
// record read it from here, so that two users can tell whether their numbers came from the
// same code.
package buildinfo

import (
	debugbuildinfo "debug/buildinfo"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is a binary's build. Revision is empty when the binary was not stamped (`go run`
// and `go test` do not stamp; `go build` in a git checkout does).
type Info struct {
	Module    string `json:"module"`
	Version   string `json:"version"` // the module's version: "(devel)" for a local build
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"` // the revision's commit time, RFC 3339
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

// Read returns the running binary's build.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)", GoVersion: runtime.Version()}
	}
	return fromBuildInfo(bi)
}

// ReadFile returns the build of the Go executable at path (a daemon a driver is about to
// start, for its run's record).
func ReadFile(path string) (Info, error) {
	bi, err := debugbuildinfo.ReadFile(path)
	if err != nil {
		return Info{}, fmt.Errorf("build of %s: %w", path, err)
	}
	return fromBuildInfo(bi), nil
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// ShortRevision is the revision's first 12 hex digits, "+dirty" after it when the tree had
// uncommitted changes; "unstamped" without a revision.
func (in Info) ShortRevision() string {
	if in.Revision == "" {
		return "unstamped"
	}
	r := in.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if in.Modified {
		r += "+dirty"
	}
	return r
}

// String is the line --version prints: "colink primproc (devel) rev 0123456789ab+dirty,
// 2026-12-01T10:00:00Z, go1.26.8".
func (in Info) String() string { return in.Line("colink") }

// Line is String naming the program.
func (in Info) Line(program string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s rev %s", program, in.Version, in.ShortRevision())
	if in.Time != "" {
		fmt.Fprintf(&b, ", %s", in.Time)
	}
	fmt.Fprintf(&b, ", %s", in.GoVersion)
	return b.String()
}
