package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Colours: the transports' elapsed bars, then one per process for the CPU stacks.
var (
	transportColors = []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255}}
	processColors   = []color.Color{color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255}, color.RGBA{227, 119, 194, 255},
		color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255}, color.RGBA{23, 190, 207, 255}}
	duckColor = color.RGBA{214, 39, 40, 255}
	// transportColorNames name transportColors in words, for a plot's key.
	transportColorNames = []string{"blue", "orange", "green"}
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
	sansSerif(p)
	p.Title.Text = fmt.Sprintf("Elapsed, then CPU by process, per query over %s\n%s, medians of the warm rounds", strings.Join(c.Transports, " and "), c.Run.ID)
	p.Y.Label.Text = "seconds"
	p.Y.Tick.Marker = niceTicks{}
	p.Legend.Top = true // in the headroom above the tallest bar (see below)
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
	tallest := 0.0
	for _, r := range c.Rows {
		for _, tr := range c.Transports {
			cell := cellOf(r, tr)
			cpu := 0.0
			for _, proc := range c.Processes {
				cpu += cell.Procs[proc].User.Median + cell.Procs[proc].Sys.Median
			}
			tallest = max(tallest, cell.Elapsed.Median, cpu)
		}
	}
	legendHeadroom(p, tallest, 2*len(c.Transports)+len(c.Processes))
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	return p, vg.Length(max(n, 8))*w*vg.Length(slots+1) + 2*vg.Inch, 5 * vg.Inch, nil
}

// legendHeadroom sets a bar plot's y range from 0 to above its tallest bar, leaving room
// over it for a legend of the given entries at the top, so that the legend sits on no bar
// and no bar is clipped.
func legendHeadroom(p *plot.Plot, tallest float64, entries int) {
	if tallest <= 0 {
		tallest = 1
	}
	p.Y.Min = 0
	p.Y.Max = tallest * (1.08 + 0.07*float64(entries))
}

// niceTicks marks a linear axis at about six round values (1, 2 or 5 times a power of ten
// apart), each labelled.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step // no drift from the repeated sum
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
	}
	return out
}

// ratioBars are medians with their confidence intervals as whiskers.
type ratioBars struct {
	plotter.XYs
	plotter.YErrors
}

// PlotRatios draws each other transport's elapsed ratio against the baseline per query
// (and level) and for the totals, on a log axis around 1: the median over the paired warm
// rounds with its 95 % bootstrap interval. The axis spans at most ratioClip either side of
// 1; a point or whisker beyond it is drawn at the edge, as a triangle labelled with its
// median, so that one outlier does not squash the rest.
func PlotRatios(c *Comparison) ([]byte, error) {
	p, w, h, err := ratiosPlot(c)
	if err != nil {
		return nil, err
	}
	return svg(p, w, h)
}

// ratioClip bounds the ratio axis: from 1/ratioClip to ratioClip.
const ratioClip = 3.0

// ratioLayout is where the ratio plot puts its points: for each other transport the
// points inside the axis with their whiskers (already cut at the axis), and those beyond it
// (drawn at its edge) with their real medians.
type ratioLayout struct {
	names      []string
	ymin, ymax float64
	series     []ratioSeries
}

type ratioSeries struct {
	transport string
	in        ratioBars
	out       plotter.XYs
	outLabels []string
}

func (c *Comparison) ratioLayout() ratioLayout {
	rows := c.rowsWithTotals()
	var lay ratioLayout
	for _, r := range rows {
		lay.names = append(lay.names, c.Label(r))
	}
	others := c.Others()
	lo, hi := 1.0, 1.0 // the line at 1 always shows
	for _, r := range rows {
		for _, tr := range others {
			if st := r.Ratio(tr); st.N > 0 {
				l, h := ciOf(st)
				lo, hi = min(lo, l), max(hi, h)
			}
		}
	}
	lo, hi = max(lo, 1/ratioClip), min(hi, ratioClip)
	// Padding on the log axis, a little more above for an outlier's label.
	lay.ymin, lay.ymax = lo/1.08, hi*1.15
	clamp := func(v float64) float64 { return min(max(v, lay.ymin), lay.ymax) }
	for ti, tr := range others {
		sr := ratioSeries{transport: tr}
		for i, r := range rows {
			st := r.Ratio(tr)
			if st.N == 0 {
				continue
			}
			x := float64(i) + 0.15*(float64(ti)-float64(len(others)-1)/2)
			if st.Median < lay.ymin || st.Median > lay.ymax {
				// At the edge, just inside it, so that the triangle shows whole.
				sr.out = append(sr.out, plotter.XY{X: x, Y: min(max(st.Median, lay.ymin*1.04), lay.ymax/1.04)})
				sr.outLabels = append(sr.outLabels, fmt.Sprintf("%.2f", st.Median))
				continue
			}
			l, h := ciOf(st)
			sr.in.XYs = append(sr.in.XYs, plotter.XY{X: x, Y: st.Median})
			sr.in.YErrors = append(sr.in.YErrors, struct{ Low, High float64 }{st.Median - clamp(l), clamp(h) - st.Median})
		}
		lay.series = append(lay.series, sr)
	}
	return lay
}

func ratiosPlot(c *Comparison) (*plot.Plot, vg.Length, vg.Length, error) {
	lay := c.ratioLayout()
	p := plot.New()
	sansSerif(p)
	// The key goes in the title's second line, not a legend over the data.
	var key []string
	for _, sr := range lay.series {
		key = append(key, sr.transport+" "+transportColorNames[slices.Index(c.Transports, sr.transport)%len(transportColorNames)])
	}
	p.Title.Text = c.ratioFinding() + "\n" + fmt.Sprintf("dots: median, 95 %% CI (%s); triangles: off the axis, median beside", strings.Join(key, ", "))
	p.Y.Label.Text = fmt.Sprintf("elapsed / %s's (log scale)", c.Baseline)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ratioTicks{}
	for _, sr := range lay.series {
		col := pick(transportColors, slices.Index(c.Transports, sr.transport))
		if len(sr.in.XYs) > 0 {
			pts, err := plotter.NewScatter(sr.in.XYs)
			if err != nil {
				return nil, 0, 0, err
			}
			pts.GlyphStyle.Shape, pts.GlyphStyle.Color = draw.CircleGlyph{}, col
			errs, err := plotter.NewYErrorBars(sr.in)
			if err != nil {
				return nil, 0, 0, err
			}
			errs.LineStyle.Color = col
			p.Add(errs, pts)
		}
		if len(sr.out) > 0 {
			marks, err := plotter.NewScatter(sr.out)
			if err != nil {
				return nil, 0, 0, err
			}
			marks.GlyphStyle.Shape, marks.GlyphStyle.Color, marks.GlyphStyle.Radius = draw.TriangleGlyph{}, col, vg.Points(4)
			labels, err := plotter.NewLabels(plotter.XYLabels{XYs: sr.out, Labels: sr.outLabels})
			if err != nil {
				return nil, 0, 0, err
			}
			for i := range labels.TextStyle {
				labels.TextStyle[i].Font.Variant = "Sans"
				labels.TextStyle[i].XAlign = draw.XCenter
				labels.TextStyle[i].YAlign = draw.YTop
				if sr.out[i].Y < 1 {
					labels.TextStyle[i].YAlign = draw.YBottom
				}
			}
			p.Add(marks, labels)
		}
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one, plotter.NewGrid())
	p.NominalX(lay.names...)
	p.X.Min, p.X.Max = -0.5, float64(len(lay.names))-0.5
	p.Y.Min, p.Y.Max = lay.ymin, lay.ymax
	return p, vg.Length(max(len(lay.names), 10))*vg.Points(36) + 2*vg.Inch, 4.5 * vg.Inch, nil
}

// ciOf is a ratio's confidence interval, or its min–max for a Stat recorded without one.
func ciOf(st measure.Stat) (lo, hi float64) {
	if st.CILo == 0 && st.CIHi == 0 {
		return st.Min, st.Max
	}
	return st.CILo, st.CIHi
}

// ratioFinding is the ratio plot's title: the first total's ratio for each other
// transport, with its interval and whether it is distinguishable from 1.
func (c *Comparison) ratioFinding() string {
	var total *Row
	if len(c.Totals) > 0 {
		total = c.Totals[0]
	}
	var parts []string
	for _, tr := range c.Others() {
		if total == nil {
			break
		}
		st := total.Ratio(tr)
		if st.N == 0 {
			continue
		}
		l, h := ciOf(st)
		verdict := "not distinguishable from 1"
		switch {
		case st.N < MinWarmRounds:
			verdict = "too few rounds to tell"
		case h < 1:
			verdict = fmt.Sprintf("%s is faster", tr)
		case l > 1:
			verdict = fmt.Sprintf("%s is slower", tr)
		}
		parts = append(parts, fmt.Sprintf("%s/%s %.2f [95 %% CI %.2f–%.2f, %d paired rounds]: %s", tr, c.Baseline, st.Median, l, h, st.N, verdict))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s: elapsed against %s per query", c.Run.ID, c.Baseline)
	}
	// One transport a line, so that the title of a three-transport run fits the plot.
	return fmt.Sprintf("%s: %s", c.Label(total), strings.Join(parts, ";\n"))
}

// ratioTicks marks a log ratio axis at round ratios, major ticks labelled.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	// About seven labels whatever the span: coarse steps on a wide axis, fine on a narrow.
	marks := []float64{0.9, 0.95, 1, 1.05, 1.1}
	switch span := hi / lo; {
	case span > 4:
		marks = []float64{0.33, 0.5, 0.67, 1, 1.5, 2, 3}
	case span > 1.6:
		marks = []float64{0.5, 0.67, 0.8, 1, 1.25, 1.5, 2}
	case span > 1.25:
		marks = []float64{0.8, 0.9, 1, 1.1, 1.25}
	}
	var out []plot.Tick
	for _, v := range marks {
		if v < lo || v > hi {
			continue
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return out
}

// sansSerif sets every text of p in the sans-serif face.
func sansSerif(p *plot.Plot) {
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
}

// PlotCosts draws, for each other transport, every paired difference against the
// baseline (elapsed, or CPU of every daemon) over the GB the execution moved, on a log x
// axis, with the fitted line.
func PlotCosts(c *Comparison, cpu bool) ([]byte, error) {
	p, err := costsPlot(c, cpu)
	if err != nil {
		return nil, err
	}
	return svg(p, 9*vg.Inch, 5*vg.Inch)
}

func costsPlot(c *Comparison, cpu bool) (*plot.Plot, error) {
	p := plot.New()
	sansSerif(p)
	what := "elapsed"
	if cpu {
		what = "CPU (user+sys, every daemon)"
	}
	var finding []string
	for _, cost := range c.Costs {
		f := cost.Elapsed
		if cpu {
			f = cost.CPU
		}
		finding = append(finding, fmt.Sprintf("%s − %s: %s", cost.Transport, c.Baseline, f))
	}
	p.Title.Text = fmt.Sprintf("%s per GB moved on the link: %s\n%s, each execution's difference against %s, fitted", what, strings.Join(finding, "; "), c.Run.ID, c.Baseline)
	p.X.Label.Text = "GB moved on the link by the execution (log scale)"
	p.Y.Label.Text = "difference, ms (below 0: faster than " + c.Baseline + ")"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = niceTicks{}
	// The small executions sit near 0 at the left, the large ones far from it at the right:
	// the bottom left is where the legend covers nothing.
	p.Legend.Top, p.Legend.Left = false, true
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := 0.0, 0.0
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
			ymin, ymax = min(ymin, y*1000), max(ymax, y*1000)
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
	pad := 0.08 * max(ymax-ymin, 1)
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(zero, plotter.NewGrid())
	return p, nil
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
	sansSerif(p)
	p.Title.Text = fmt.Sprintf("Elapsed per query: colink over %s against DuckDB\n%s and %s, medians of the warm rounds", strings.Join(c.Transports, " and "), c.Run.ID, d.Run.ID)
	p.Y.Label.Text = "seconds"
	p.Y.Tick.Marker = niceTicks{}
	p.Legend.Top = true // in the headroom above the tallest bar
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
	tallest := 0.0
	for _, r := range rows {
		for _, tr := range c.Transports {
			tallest = max(tallest, cellOf(r, tr).Elapsed.Median)
		}
		tallest = max(tallest, d.Elapsed[r.Query].Median)
	}
	legendHeadroom(p, tallest, slots)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	return p, vg.Length(max(n, 8))*w*vg.Length(slots+1) + 2*vg.Inch, 5 * vg.Inch, nil
}
