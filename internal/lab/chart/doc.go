// Package chart draws the pictures of locklab's reports: the comparison
// report's line charts, latency curves, effects and forest plots, and the store
// benchmark's panels of ns/op against the critical section and against
// CPUs. Every picture is SVG, drawn with gonum/plot's SVG canvas
// (vg/vgsvg).
//
// One stack, and that one, because of what a reader needs: a report.md
// links its pictures as files, and a repository browser renders an SVG
// file linked from Markdown as it renders a PNG, while the SVG stays text
// (a diff of a re-rendered report shows what moved) and scales without
// blurring. report.html inlines the same bytes as data: URLs. gonum/plot
// already drew both kinds of picture (the reports' SVG and the store
// benchmark's PNG), so keeping it and writing SVG everywhere changed no
// byte of the forest plots' golden files, and the code kept is the
// smaller: a hand-written SVG writer would have to redo axes, log scales,
// ticks, legends and text metrics that gonum/plot has.
//
// The package holds what every picture shares — the SVG encoding (SVG,
// Grid), one look for a series of points with error bars (Lines, Curves),
// the legend's placement (LegendCorner), the tick markers (LevelTicks,
// PercentileTicks) — and the forest plot and the headline's chart of
// effects whole (Forest, Effects). The packages that
// own the data build a *plot.Plot from it and hand it here.
package chart
