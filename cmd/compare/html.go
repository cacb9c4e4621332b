package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// charts draws, for one workload, throughput and tail latency against the
// load level, one line per mode, with the repetitions' range as error bars.
func (rep *Report) charts(wl string) []block {
	unit := "VUs"
	if rep.Meta.Model == "open" {
		unit = "arrival rate (iterations/s)"
	}
	specs := []struct {
		title, ylabel, key string
	}{
		{wl + ": throughput", "requests/s", "requests_per_sec"},
		{wl + ": p95 latency", "grpc_req_duration p95 (ms)", "grpc_req_duration_ms.p95"},
		{wl + ": p99 latency", "grpc_req_duration p99 (ms)", "grpc_req_duration_ms.p99"},
	}
	var out []block
	for _, sp := range specs {
		svg, err := rep.lineChart(wl, sp.title, unit, sp.ylabel, sp.key)
		if err != nil {
			out = append(out, para("chart "+sp.title+" failed: "+err.Error()))
			continue
		}
		out = append(out, chart{title: sp.title, svg: svg})
	}
	return out
}

// errPoints are points with vertical error bars, for plotter.YErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

func (rep *Report) lineChart(wl, title, xlabel, ylabel, key string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	logX := len(rep.Meta.Levels) > 1 && rep.Meta.Levels[0] > 0
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = levelTicks(rep.Meta.Levels)
	}
	p.Add(plotter.NewGrid())
	var all []errPoints
	for i, mode := range rep.Meta.Modes {
		var pts errPoints
		for _, level := range rep.Meta.Levels {
			g := rep.group(wl, level, mode)
			if g == nil || g.fig(key).N == 0 {
				continue
			}
			s := g.fig(key)
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(level), Y: s.Median})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{s.Median - s.Min, s.Max - s.Median})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, err
		}
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		points.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color = c
		p.Add(line, points, bars)
		p.Legend.Add(mode, line, points)
		all = append(all, pts)
	}
	p.Y.Min = 0
	// Latency rises with load and closed-model throughput may fall, so no
	// one corner is always free: the legend goes where the data is not.
	p.Legend.Top, p.Legend.Left = legendCorner(all, logX)
	var buf bytes.Buffer
	w, err := p.WriterTo(16*vg.Centimeter, 9*vg.Centimeter, "svg")
	if err != nil {
		return nil, err
	}
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// legendCorner picks the corner of a chart (y from 0 to the highest error
// bar) that holds the fewest points and error-bar ends, preferring top left,
// then top right, bottom left, bottom right when they tie.
func legendCorner(series []errPoints, logX bool) (top, left bool) {
	type pt struct{ x, y float64 }
	var pts []pt
	xMin, xMax, yMax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range series {
		for i, xy := range s.XYs {
			x := xy.X
			if logX {
				x = math.Log(x)
			}
			lo, hi := xy.Y-s.YErrors[i].Low, xy.Y+s.YErrors[i].High
			pts = append(pts, pt{x, xy.Y}, pt{x, lo}, pt{x, hi})
			xMin, xMax, yMax = min(xMin, x), max(xMax, x), max(yMax, hi)
		}
	}
	corners := []struct{ top, left bool }{{true, true}, {true, false}, {false, true}, {false, false}}
	best, bestN := 0, math.MaxInt
	for c, corner := range corners {
		n := 0
		for _, q := range pts {
			fx, fy := 0.5, 0.5
			if xMax > xMin {
				fx = (q.x - xMin) / (xMax - xMin)
			}
			if yMax > 0 {
				fy = q.y / yMax
			}
			inX := (corner.left && fx <= 0.4) || (!corner.left && fx >= 0.6)
			inY := (corner.top && fy >= 0.7) || (!corner.top && fy <= 0.3)
			if inX && inY {
				n++
			}
		}
		if n < bestN {
			best, bestN = c, n
		}
	}
	return corners[best].top, corners[best].left
}

// levelTicks labels exactly the measured levels on a log axis.
type levelTicks []int

func (t levelTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, l := range t {
		if v := float64(l); v >= min && v <= max {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprint(l)})
		}
	}
	return ticks
}

const pageTemplate = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.85rem}
th,td{border:1px solid #ccc;padding:0.3rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}
code{background:#f3f3f3;padding:0 0.2rem}
figure{display:inline-block;margin:0.5rem}
figcaption{font-size:0.8rem;text-align:center}
</style></head><body>
{{range .Blocks}}{{.}}
{{end}}</body></html>
`

// html renders the report as one self-contained page: styles inline, charts
// as inline SVG data, nothing fetched from the network.
func (rep *Report) html() (string, error) {
	var parts []template.HTML
	for _, blk := range rep.blocks(true) {
		switch x := blk.(type) {
		case heading:
			parts = append(parts, template.HTML(fmt.Sprintf("<h%d>%s</h%d>", x.level, template.HTMLEscapeString(x.text), x.level)))
		case para:
			parts = append(parts, template.HTML("<p>"+codeSpans(template.HTMLEscapeString(string(x)))+"</p>"))
		case table:
			var b bytes.Buffer
			b.WriteString("<table><tr>")
			for _, h := range x.header {
				b.WriteString("<th>" + template.HTMLEscapeString(h) + "</th>")
			}
			b.WriteString("</tr>")
			for _, r := range x.rows {
				b.WriteString("<tr>")
				for _, c := range r {
					b.WriteString("<td>" + template.HTMLEscapeString(c) + "</td>")
				}
				b.WriteString("</tr>")
			}
			b.WriteString("</table>")
			parts = append(parts, template.HTML(b.String()))
		case chart:
			parts = append(parts, template.HTML(fmt.Sprintf(
				`<figure><img alt="%s" src="data:image/svg+xml;base64,%s"><figcaption>%s</figcaption></figure>`,
				template.HTMLEscapeString(x.title), base64.StdEncoding.EncodeToString(x.svg), template.HTMLEscapeString(x.title))))
		}
	}
	t, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = t.Execute(&b, struct {
		Title  string
		Blocks []template.HTML
	}{"locklab comparison", parts})
	return b.String(), err
}

// codeSpans turns `x` (already escaped) into <code>x</code>.
func codeSpans(s string) string {
	var b bytes.Buffer
	open := false
	for _, r := range s {
		if r == '`' {
			if open {
				b.WriteString("</code>")
			} else {
				b.WriteString("<code>")
			}
			open = !open
			continue
		}
		b.WriteRune(r)
	}
	if open {
		b.WriteString("</code>")
	}
	return b.String()
}
