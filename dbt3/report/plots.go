package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours: the transports' elapsed bars, then one per process for the CPU stacks.
var (
	transportColors = []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255}}
	processColors   = []color.Color{color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255}, color.RGBA{227, 119, 194, 255},
		color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255}, color.RGBA{23, 190, 207, 255}}
	duckColor = color.RGBA{214, 39, 40, 255}
)

func pick(cs []color.Color, i int) color.Color { return cs[i%len(cs)] }

// svg renders p at w×h as SVG.
func svg(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func queryNames(c *Comparison) []string {
	names := make([]string, len(c.Rows))
	for i, r := range c.Rows {
		names[i] = c.Label(r)
	}
	return names
}

// PlotTransports draws, per query, each transport's median elapsed time and, beside them,
// each transport's median CPU stacked by process (exemgr, primproc0, …), in seconds.
func PlotTransports(c *Comparison) ([]byte, error) {
	p, w, h, err := transportsPlot(c)
	if err != nil {
		return nil, err
	}
	return svg(p, w, h)
}

func transportsPlot(c *Comparison) (*plot.Plot, vg.Length, vg.Length, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — bars per query: elapsed over %s, then CPU (user+sys) over %s, stacked by process",
		c.Run.ID, strings.Join(c.Transports, ", "), strings.Join(c.Transports, ", "))
	p.Y.Label.Text = "seconds (median of the warm rounds)"
	p.Legend.Top = true
	n := len(c.Rows)
	slots := 2 * len(c.Transports)
	w := vg.Points(7)
	offset := func(slot int) vg.Length { return w * vg.Length(float64(slot)-float64(slots-1)/2) }
	for ti, tr := range c.Transports {
		vals := make(plotter.Values, n)
		for i, r := range c.Rows {
			vals[i] = cellOf(r, tr).Elapsed.Median
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, 0, 0, err
		}
		bars.Offset = offset(ti)
		bars.Color = pick(transportColors, ti)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add("elapsed "+tr, bars)
	}
	for ti, tr := range c.Transports {
		var below *plotter.BarChart
		for pi, proc := range c.Processes {
			vals := make(plotter.Values, n)
			for i, r := range c.Rows {
				ps := cellOf(r, tr).Procs[proc]
				vals[i] = ps.User.Median + ps.Sys.Median
			}
			bars, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return nil, 0, 0, err
			}
			bars.Offset = offset(len(c.Transports) + ti)
			bars.Color = pick(processColors, pi)
			bars.LineStyle.Width = 0
			if below != nil {
				bars.StackOn(below)
			}
			below = bars
			p.Add(bars)
			if ti == 0 {
				p.Legend.Add("CPU "+proc, bars)
			}
		}
	}
	p.NominalX(queryNames(c)...)
	p.Add(plotter.NewGrid())
	return p, vg.Length(max(n, 8))*w*vg.Length(slots+1) + 2*vg.Inch, 5 * vg.Inch, nil
}

// ratioBars are medians with min–max whiskers.
type ratioBars struct {
	plotter.XYs
	plotter.YErrors
}

// PlotRatios draws each other transport's elapsed ratio against the baseline per query
// (and level) and for the totals: median and min–max over the paired warm rounds, with a
// line at 1.
func PlotRatios(c *Comparison) ([]byte, error) {
	p, w, h, err := ratiosPlot(c)
	if err != nil {
		return nil, err
	}
	return svg(p, w, h)
}

func ratiosPlot(c *Comparison) (*plot.Plot, vg.Length, vg.Length, error) {
	rows := c.rowsWithTotals()
	var names []string
	for _, r := range rows {
		names = append(names, c.Label(r))
	}
	p := plot.New()
	others := c.Others()
	p.Title.Text = fmt.Sprintf("%s: elapsed against %s, median and min–max over paired rounds", c.Run.ID, c.Baseline)
	p.Y.Label.Text = fmt.Sprintf("transport / %s (below 1: faster than %s)", c.Baseline, c.Baseline)
	p.Legend.Top = true
	lo, hi := 1.0, 1.0 // the line at 1 always shows
	for ti, tr := range others {
		var rb ratioBars
		for i, r := range rows {
			st := r.Ratio(tr)
			if st.N == 0 {
				continue
			}
			x := float64(i) + 0.15*(float64(ti)-float64(len(others)-1)/2)
			rb.XYs = append(rb.XYs, plotter.XY{X: x, Y: st.Median})
			rb.YErrors = append(rb.YErrors, struct{ Low, High float64 }{st.Median - st.Min, st.Max - st.Median})
			lo, hi = min(lo, st.Min), max(hi, st.Max)
		}
		if len(rb.XYs) == 0 {
			continue
		}
		pts, err := plotter.NewScatter(rb.XYs)
		if err != nil {
			return nil, 0, 0, err
		}
		pts.GlyphStyle.Shape = draw.CircleGlyph{}
		pts.GlyphStyle.Color = pick(transportColors, slices.Index(c.Transports, tr))
		errs, err := plotter.NewYErrorBars(rb)
		if err != nil {
			return nil, 0, 0, err
		}
		errs.LineStyle.Color = pts.GlyphStyle.Color
		p.Add(errs, pts)
		p.Legend.Add(tr+" / "+c.Baseline, pts)
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	pad := 0.06 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	return p, vg.Length(max(len(names), 8))*vg.Points(36) + 2*vg.Inch, 4 * vg.Inch, nil
}

// PlotCosts draws, for each other transport, every paired difference against the
// baseline (elapsed, or CPU of every daemon) over the GB the execution moved, on a log x
// axis, with the fitted line.
func PlotCosts(c *Comparison, cpu bool) ([]byte, error) {
	p := plot.New()
	what := "elapsed"
	if cpu {
		what = "CPU (user+sys, every daemon)"
	}
	p.Title.Text = fmt.Sprintf("%s: %s, transport − %s, per execution, over link bytes", c.Run.ID, what, c.Baseline)
	p.X.Label.Text = "GB moved on the link by the execution (log scale)"
	p.Y.Label.Text = "difference, ms (below 0: faster than " + c.Baseline + ")"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, cost := range c.Costs {
		var xys plotter.XYs
		for _, pr := range cost.Pairs {
			if pr.GB <= 0 {
				continue
			}
			y := pr.Elapsed
			if cpu {
				y = pr.CPU
			}
			xys = append(xys, plotter.XY{X: pr.GB, Y: y * 1000})
			xmin, xmax = min(xmin, pr.GB), max(xmax, pr.GB)
		}
		if len(xys) == 0 {
			continue
		}
		col := pick(transportColors, slices.Index(c.Transports, cost.Transport))
		pts, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		pts.GlyphStyle.Shape, pts.GlyphStyle.Color, pts.GlyphStyle.Radius = draw.CircleGlyph{}, col, vg.Points(2)
		f := cost.Elapsed
		if cpu {
			f = cost.CPU
		}
		line := plotter.NewFunction(func(x float64) float64 { return (f.Intercept + f.Slope*x) * 1000 })
		line.Color = col
		line.Samples = 200
		p.Add(pts, line)
		p.Legend.Add(fmt.Sprintf("%s − %s", cost.Transport, c.Baseline), pts)
		p.Legend.Add(fmt.Sprintf("fit: %s", f), line)
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 1e-6, 1
	}
	p.X.Min, p.X.Max = xmin/2, xmax*2
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(zero, plotter.NewGrid())
	return svg(p, 9*vg.Inch, 5*vg.Inch)
}

// PlotDuckDB draws, per query, colink's median elapsed time over each transport beside
// DuckDB's.
func PlotDuckDB(c *Comparison, d *DuckDB) ([]byte, error) {
	p, w, h, err := duckDBPlot(c, d)
	if err != nil {
		return nil, err
	}
	return svg(p, w, h)
}

func duckDBPlot(c *Comparison, d *DuckDB) (*plot.Plot, vg.Length, vg.Length, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("colink (%s) against DuckDB (%s), elapsed", c.Run.ID, d.Run.ID)
	p.Y.Label.Text = "seconds (median of the warm rounds)"
	p.Legend.Top = true
	rows := c.fullRows()
	n := len(rows)
	slots := len(c.Transports) + 1
	w := vg.Points(8)
	offset := func(slot int) vg.Length { return w * vg.Length(float64(slot)-float64(slots-1)/2) }
	add := func(slot int, label string, col color.Color, value func(r *Row) float64) error {
		vals := make(plotter.Values, n)
		for i, r := range rows {
			vals[i] = value(r)
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Offset, bars.Color, bars.LineStyle.Width = offset(slot), col, 0
		p.Add(bars)
		p.Legend.Add(label, bars)
		return nil
	}
	for ti, tr := range c.Transports {
		if err := add(ti, "colink "+tr, pick(transportColors, ti), func(r *Row) float64 { return cellOf(r, tr).Elapsed.Median }); err != nil {
			return nil, 0, 0, err
		}
	}
	if err := add(len(c.Transports), "DuckDB", duckColor, func(r *Row) float64 { return d.Elapsed[r.Query].Median }); err != nil {
		return nil, 0, 0, err
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Query)
	}
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	return p, vg.Length(max(n, 8))*w*vg.Length(slots+1) + 2*vg.Inch, 5 * vg.Inch, nil
}
