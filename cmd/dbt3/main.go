// Command dbt3 is colink's DBT3/TPC-H toolkit: it generates the data (dbgen-identical) and
// the query streams (qgen), loads them into the primprocs, runs the queries, the power and
// throughput tests, the transport comparison and the fault suite, and writes the reports.
// The work is done in the dbt3 packages (dbt3, dbt3/load, dbt3/bench, dbt3/faults,
// dbt3/report); this command is their flags.
//
// Every subcommand is a command value listed in commands(), in a file with its flags and
// usage text. A subcommand parses its arguments with its own pflag.FlagSet and returns an
// error; a *dbt3.UsageError (bad arguments: unknown flag, bad value, unusable directory)
// makes dbt3 exit with status 2, any other error with status 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/internal/buildinfo"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitInterrupted is a shell's status for a command ended by SIGINT (128+2).
	exitInterrupted = 130
)

// command is one dbt3 subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, out dbt3.Output, args []string) error
}

// commands lists the subcommands in the order usage shows them.
func commands() []command {
	return []command{
		{"gen", "generate TPC-H tables and refresh sets, byte-identical to dbgen 2.14", runGen},
		{"qgen", "write the 22 queries of a stream with qgen's parameters", runQgen},
		{"load", "load TPC-H tables (generated or from files) into primprocs over the link", runLoad},
		{"import", "import Parquet or CSV files into a new table, with a progress bar", runImport},
		{"query", "run a query script through exemgr and print its result (psv or table)", runQuery},
		{"power", "DBT3's power test against a running exemgr, with the power metric", runPower},
		{"throughput", "DBT3's throughput test: concurrent query streams, with the throughput metric", runThroughput},
		{"compare", "the transport comparison: daemons started per transport, queries measured, results written", runCompare},
		{"bench", "generate, start, load, compare tcp and unix, write results/ — the main job", runBench},
		{"report", "Markdown and SVG plots from run records (colink and DuckDB)", runReport},
		{"faults", "the fault suite: kills, freezes, bad input, idle and stalled clients against the daemons; results/faults.md", runFaults},
	}
}

// newFlagSet returns the flag set of subcommand name, whose usage prints synopsis, then text
// (which begins with a blank line), then the flags, on stderr.
func newFlagSet(name string, out dbt3.Output, synopsis, text string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(out.Stderr, synopsis)
		fmt.Fprintln(out.Stderr, text)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs and turns its failures into usage errors. It returns
// errHelp after printing the usage for -h/--help.
func parseFlags(fs *pflag.FlagSet, out dbt3.Output, args []string) error {
	if err := parseFlagsAndArgs(fs, out, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return dbt3.Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseFlagsAndArgs is parseFlags for a command that takes arguments after its flags.
func parseFlagsAndArgs(fs *pflag.FlagSet, out dbt3.Output, args []string) error {
	fs.SetOutput(out.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return &dbt3.UsageError{Err: err}
	}
	return nil
}

// errHelp reports that help was asked for and printed; dbt3 exits 0.
var errHelp = errors.New("help requested")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := dbt3.Output{Stdout: os.Stdout, Stderr: os.Stderr, StderrTerminal: isTerminal(os.Stderr)}
	code := run(ctx, out, os.Args[1:])
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// run dispatches to a subcommand and maps its outcome to an exit status.
func run(ctx context.Context, out dbt3.Output, args []string) int {
	if len(args) == 0 {
		usage(out.Stderr)
		return exitUsage
	}
	name := args[0]
	switch {
	case name == "help" && len(args) > 1: // dbt3 help CMD is dbt3 CMD --help
		name, args = args[1], []string{args[1], "--help"}
	case name == "-h" || name == "--help" || name == "help":
		usage(out.Stdout)
		return exitOK
	case name == "--version" || name == "version":
		fmt.Fprintln(out.Stdout, buildinfo.Read().Line("dbt3"))
		return exitOK
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, out, args[1:])
		switch {
		case err == nil, errors.Is(err, errHelp):
			return exitOK
		case ctx.Err() != nil:
			// An interrupt (SIGINT or SIGTERM) ends a command through its context; the
			// error chain then only says "context canceled". Exit as a shell does.
			fmt.Fprintf(out.Stderr, "dbt3 %s: interrupted\n", name)
			return exitInterrupted
		case dbt3.IsUsage(err):
			fmt.Fprintf(out.Stderr, "dbt3 %s: %v\nRun 'dbt3 %s --help' for usage.\n", name, err, name)
			return exitUsage
		default:
			fmt.Fprintf(out.Stderr, "dbt3 %s: %v\n", name, err)
			return exitFailure
		}
	}
	fmt.Fprintf(out.Stderr, "dbt3: unknown command %q\n", name)
	usage(out.Stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dbt3 <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  version    print dbt3's build (version, revision, Go) and exit")
	fmt.Fprintln(w, "\nRun 'dbt3 help <command>' or 'dbt3 <command> --help' for a command's flags.")
}
