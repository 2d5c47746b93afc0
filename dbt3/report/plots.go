package report

import (
	"bytes"
	"fmt"
	"image/color"
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
		names[i] = r.Query
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

// PlotRatios draws the unix/tcp elapsed ratio per query and for the totals: median and
// min–max over the paired warm rounds, with a line at 1.
func PlotRatios(c *Comparison) ([]byte, error) {
	p, w, h, err := ratiosPlot(c)
	if err != nil {
		return nil, err
	}
	return svg(p, w, h)
}

func ratiosPlot(c *Comparison) (*plot.Plot, vg.Length, vg.Length, error) {
	rows := append(append([]*Row(nil), c.Rows...), c.Totals...)
	var rb ratioBars
	var names []string
	for _, r := range rows {
		names = append(names, r.Query)
		if r.Ratio.N == 0 {
			continue
		}
		x := float64(len(names) - 1)
		rb.XYs = append(rb.XYs, plotter.XY{X: x, Y: r.Ratio.Median})
		rb.YErrors = append(rb.YErrors, struct{ Low, High float64 }{r.Ratio.Median - r.Ratio.Min, r.Ratio.Max - r.Ratio.Median})
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: unix / tcp elapsed, median and min–max over paired rounds", c.Run.ID)
	p.Y.Label.Text = "unix / tcp (below 1: unix faster)"
	if len(rb.XYs) > 0 {
		pts, err := plotter.NewScatter(rb.XYs)
		if err != nil {
			return nil, 0, 0, err
		}
		pts.GlyphStyle.Shape = draw.CircleGlyph{}
		pts.GlyphStyle.Color = transportColors[1]
		errs, err := plotter.NewYErrorBars(rb)
		if err != nil {
			return nil, 0, 0, err
		}
		p.Add(errs, pts)
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	lo, hi := 1.0, 1.0 // the line at 1 always shows
	for i, xy := range rb.XYs {
		lo = min(lo, xy.Y-rb.YErrors[i].Low)
		hi = max(hi, xy.Y+rb.YErrors[i].High)
	}
	pad := 0.06 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	return p, vg.Length(max(len(names), 8))*vg.Points(36) + 2*vg.Inch, 4 * vg.Inch, nil
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
	n := len(c.Rows)
	slots := len(c.Transports) + 1
	w := vg.Points(8)
	offset := func(slot int) vg.Length { return w * vg.Length(float64(slot)-float64(slots-1)/2) }
	add := func(slot int, label string, col color.Color, value func(r *Row) float64) error {
		vals := make(plotter.Values, n)
		for i, r := range c.Rows {
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
	p.NominalX(queryNames(c)...)
	p.Add(plotter.NewGrid())
	return p, vg.Length(max(n, 8))*w*vg.Length(slots+1) + 2*vg.Inch, 5 * vg.Inch, nil
}
