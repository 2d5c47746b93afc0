package daemon

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/internal/buildinfo"
)

// VersionFlag adds --version to fs.
func VersionFlag(fs *pflag.FlagSet) *bool {
	return fs.Bool("version", false, "print the build (module version, VCS revision and dirty flag, Go version) and exit")
}

// PrintVersion writes program's --version line to w.
func PrintVersion(w io.Writer, program string) {
	fmt.Fprintln(w, buildinfo.Read().Line(program))
}

// LogBuild logs the build a daemon runs, once at its start, so that a log ties to its code.
func LogBuild(log *slog.Logger, program string) {
	in := buildinfo.Read()
	log.Info(program+": build", "version", in.Version, "revision", in.ShortRevision(), "go", in.GoVersion)
}
