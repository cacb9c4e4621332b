package chart_test

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"

	"github.com/locklab/locklab/internal/lab/chart"
	"github.com/locklab/locklab/internal/lab/paired"
)

// A chart's owner builds the plot from its data; package chart gives the
// series their look and writes the SVG.
func ExampleLines() {
	mutex := chart.Series{Name: "mutex"}
	mutex.Add(1, 100, 5, 8) // x, y, and the bar 5 below and 8 above
	mutex.Add(8, 420, 20, 30)
	inputQ := chart.Series{Name: "inputQ"}
	inputQ.Add(1, 130, 4, 4)
	inputQ.Add(8, 260, 10, 15)

	p := plot.New()
	p.Title.Text = "ns/op against CPUs"
	drawn, err := chart.Lines(p, []chart.Series{mutex, inputQ})
	if err != nil {
		panic(err)
	}
	svg, err := chart.SVG(p, chart.Width, chart.Height)
	if err != nil {
		panic(err)
	}
	fmt.Println(drawn, "series;", bytes.Contains(svg, []byte("<svg")))
	// Output: 2 series; true
}

func ExampleForest() {
	fo := chart.Forest{
		Title:  "inputQ against mutex",
		XLabel: "effect (%)",
		Margin: 0.03,
		Rows: []chart.ForestRow{
			{Label: "calls/s", Ratio: 1.12, Lo: 1.08, Hi: 1.16, Drawn: true, Outcome: paired.OutcomeDetected},
			{Label: "p99 latency", Ratio: 1.01, Lo: 0.99, Hi: 1.02, Drawn: true, Outcome: paired.OutcomeEquivalent},
		},
	}
	svg, err := fo.SVG()
	if err != nil {
		panic(err)
	}
	fmt.Println(bytes.Contains(svg, []byte(">calls/s<")), bytes.Contains(svg, []byte(">p99 latency<")))
	// Output: true true
}
