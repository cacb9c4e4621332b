package report

import (
	"gonum.org/v1/plot"

	"github.com/locklab/locklab/internal/lab/record"
)

// What a feature's section shares with every report: the renderings, the
// formats of figures and the statistics, so that a Part says a number as
// the rest of the report does.

// RenderMarkdown renders pieces as GitHub-flavoured Markdown, as a
// comparison's report.md.
func RenderMarkdown(pieces []Piece) string { return markdown(pieces) }

// RenderHTML renders pieces as one self-contained page, as a comparison's
// report.html.
func RenderHTML(title string, pieces []Piece) (string, error) { return renderHTML(title, pieces) }

// TOC marks where a table of contents goes: the headings of levels 2 and
// 3 that follow it.
func TOC() Piece { return toc{} }

// DirtyWarning is a report's first piece when its runs were made from a
// working tree with uncommitted changes; none for a clean one.
func DirtyWarning(m record.Meta) []Piece { return dirtyWarning(m) }

// CommitText names the code a study ran: its commit, and whether the
// working tree held more.
func CommitText(m record.Meta) string { return commitText(m) }

// SVG draws a plot as a report's chart is drawn (size and format).
func SVG(p *plot.Plot) ([]byte, error) { return svgOf(p) }

// FmtNum formats a count or rate as the report's tables do.
func FmtNum(v float64) string { return fmtNum(v) }

// FmtMs formats a latency in milliseconds.
func FmtMs(ms float64) string { return fmtMs(ms) }

// FmtCI formats a figure's median with its interval, or its runs' range.
func FmtCI(s Stat, f func(float64) string) string { return fmtCI(s, f) }

// JoinInts lists integers with commas.
func JoinInts(xs []int) string { return joinInts(xs) }

// StatOf is the median of values with its 95% interval (golang.org/x/perf's
// benchmath), ids naming the runs behind them.
func StatOf(vals []float64, ids []string) Stat { return statOfValues(vals, ids) }

// Fig is the group's figure of a metric of the catalogue.
func (g *Group) Fig(m *Metric) Stat { return g.fig(m) }

// Records are the group's clean runs, the ones its figures are of.
func (g *Group) Records() []*record.Run { return g.records }

// LevelName names a load level as the report's headings do.
func (rep *Report) LevelName(level int) string { return rep.levelName(level) }

// The catalogue's rows a feature's section reads by name.
var (
	CallsPerSec      = mCallsPerSec
	ServerCPUPerCall = mServerCPUPerCall
	SerialDemand     = mSerialDemand
	WritesPerCall    = mWritesPerCall
	ReadsPerCall     = mReadsPerCall
)

// Attributed reports whether a run's server was profiled and its CPU
// folded (-attribute).
func Attributed(r *record.Run) bool { return attributed(r) }

// CellName names a cell as the report's headings do.
func (rep *Report) CellName(c Cell) string { return rep.cellName(c) }

// Baseline is the design every other is compared with.
func (rep *Report) Baseline() string { return rep.baseline() }

// SharedNote is the flag of figures whose runs had the driver on the
// server's CPUs (-share-cpus).
const SharedNote = sharedNote

// LevelTicks are an axis's ticks at the levels given, as the report's
// charts of levels have.
type LevelTicks = levelTicks

// ErrPoints are points with vertical error bars, for plotter.YErrorBars.
type ErrPoints = errPoints

// Cells are the report's groups without their modes, in the groups' order.
func (rep *Report) Cells() []Cell { return rep.cells() }

// Group is the group of a section, level and mode, or nil.
func (rep *Report) Group(sec Section, level int, mode string) *Group {
	return rep.group(sec, level, mode)
}

// BlockValues are a metric's values of two groups paired by block, as the
// verdicts pair them (failed runs and unusable figures left out).
func BlockValues(d, a *Group, m *Metric) (dv, av []float64, err error) { return blockValues(d, a, m) }

// Key identifies a group across results folders: every factor is part of it.
func (g *Group) Key() string { return g.key() }
