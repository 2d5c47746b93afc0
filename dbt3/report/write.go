package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/atomicfile"
)

// The files Write creates in a run's directory.
const (
	MarkdownFile   = "report.md"
	TransportsSVG  = "transports.svg"
	RatiosSVG      = "ratios.svg"
	CostElapsedSVG = "cost-elapsed.svg"
	CostCPUSVG     = "cost-cpu.svg"
	DuckDBSVG      = "colink-vs-duckdb.svg"
	ComparisonJSON = "compare.json"
)

// Runs sorts runs read from JSON files into the colink comparison and the DuckDB run.
type Runs struct {
	Compare *measure.Run
	DuckDB  *measure.Run
}

// ReadRuns reads run files: exactly one colink comparison (driver "compare") and at most
// one DuckDB run (driver "duckdb").
func ReadRuns(paths []string) (Runs, error) {
	var rs Runs
	for _, p := range paths {
		r, err := measure.ReadFile(p)
		if err != nil {
			return Runs{}, err
		}
		switch r.Driver {
		case "compare":
			if rs.Compare != nil {
				return Runs{}, fmt.Errorf("%s: a second comparison run (%s and %s); give one", p, rs.Compare.ID, r.ID)
			}
			rs.Compare = r
		case "duckdb":
			if rs.DuckDB != nil {
				return Runs{}, fmt.Errorf("%s: a second DuckDB run (%s and %s); give one", p, rs.DuckDB.ID, r.ID)
			}
			rs.DuckDB = r
		default:
			return Runs{}, fmt.Errorf("%s: run %s is a %q run; the report takes a \"compare\" run and optionally a \"duckdb\" run", p, r.ID, r.Driver)
		}
	}
	if rs.Compare == nil {
		return Runs{}, fmt.Errorf("no comparison run among %v", paths)
	}
	return rs, nil
}

// Write writes the Markdown report, the SVG plots and the self-contained HTML report (the
// plots inline) of rs into dir and returns the Markdown text and the paths written.
func Write(dir string, rs Runs) (markdown []byte, files []string, err error) {
	c := Summarize(rs.Compare)
	var d *DuckDB
	if rs.DuckDB != nil {
		d = SummarizeDuckDB(rs.DuckDB)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, c, d); err != nil {
		return nil, nil, err
	}
	outputs := []struct {
		name string
		make func() ([]byte, error)
	}{
		{MarkdownFile, func() ([]byte, error) { return md.Bytes(), nil }},
		{TransportsSVG, func() ([]byte, error) { return PlotTransports(c) }},
		{RatiosSVG, func() ([]byte, error) { return PlotRatios(c) }},
	}
	if len(c.Costs) > 0 {
		outputs = append(outputs, []struct {
			name string
			make func() ([]byte, error)
		}{
			{CostElapsedSVG, func() ([]byte, error) { return PlotCosts(c, false) }},
			{CostCPUSVG, func() ([]byte, error) { return PlotCosts(c, true) }},
		}...)
	}
	if d != nil {
		outputs = append(outputs, struct {
			name string
			make func() ([]byte, error)
		}{DuckDBSVG, func() ([]byte, error) { return PlotDuckDB(c, d) }})
	}
	var plots [][]byte
	for _, o := range outputs {
		data, err := o.make()
		if err != nil {
			return nil, files, fmt.Errorf("report: %s: %w", o.name, err)
		}
		if strings.HasSuffix(o.name, ".svg") {
			plots = append(plots, data)
		}
		path := filepath.Join(dir, o.name)
		if err := atomicfile.Write(path, data, 0o644); err != nil {
			return nil, files, err
		}
		files = append(files, path)
	}
	page, err := WriteHTML(c, plots)
	if err != nil {
		return nil, files, fmt.Errorf("report: %s: %w", HTMLFile, err)
	}
	path := filepath.Join(dir, HTMLFile)
	if err := atomicfile.Write(path, page, 0o644); err != nil {
		return nil, files, err
	}
	files = append(files, path)
	return md.Bytes(), files, nil
}

// RunDir is the directory of the first colink comparison among the run files at paths,
// where "dbt3 report" writes by default; "" if none is one.
func RunDir(paths []string) string {
	for _, p := range paths {
		if r, _ := ReadRuns([]string{p}); r.Compare != nil {
			return filepath.Dir(p)
		}
	}
	return ""
}
