// Package mva predicts a design's throughput at points it did not see, by
// exact mean-value analysis (MVA) of a closed queueing network
// (M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed multichain
// queuing networks", JACM 27(2), 1980; E. D. Lazowska, J. Zahorjan,
// G. S. Graham and K. C. Sevcik, Quantitative System Performance, 1984,
// ch. 6).
//
// The network has three kinds of centre, and a fixed number of callers
// (the closed driver's connections or virtual users) circulating through
// them, each call visiting every centre once:
//
//   - a delay centre of Think seconds per call: everything outside the
//     server's CPUs and its serial resource — the driver's own work, the
//     network, the kernel's path. No call waits for another there;
//   - one queueing centre per server CPU, each with demand D_cpu/N: the
//     server's CPU per call, spread evenly over its N CPUs;
//   - one single-server queueing centre of demand D_serial: the design's
//     serial resource (the lock, the owner goroutine, the combiner's
//     role). This is the contention: calls queue for it, and no number of
//     CPUs shortens that queue.
//
// The serial resource's time is CPU time too; the network charges it to
// both kinds of centre, which keeps the asymptotes exact (X ≤ N/D_cpu and
// X ≤ 1/D_serial) and makes the response time below saturation somewhat
// pessimistic. The algorithm is exact for this network: for k = 1..callers
// it computes each centre's residence R_i = D_i(1 + Q_i(k−1)), throughput
// X(k) = k / (Think + Σ R_i) and queues Q_i(k) = X(k)·R_i.
//
// Fit estimates a model from measured points: each demand as a straight
// line in the work per command (gonum's least squares), and Think as the
// delay with which the network best reproduces the fitted points'
// throughput (least squares on its log, over a fine grid). Predict carries the model to other work, CPU
// counts and caller counts. What it assumes, and so where it can fail: the
// demands depend on the work only, not on the CPU count or the load; the
// time outside the server is the same per call everywhere; a CPU is a CPU
// (no SMT, no NUMA, no frequency changes).
package mva

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Network is one closed network's centres.
type Network struct {
	Think  float64 // seconds per call at the delay centre
	CPUs   int     // queueing centres of CPU/CPUs each
	CPU    float64 // D_cpu, seconds per call
	Serial float64 // D_serial, seconds per call; 0: no serial centre
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (n Network) valid() error {
	switch {
	case n.CPUs < 1:
		return fmt.Errorf("mva: %d CPUs; want at least one", n.CPUs)
	case !finite(n.CPU) || n.CPU <= 0:
		return fmt.Errorf("mva: D_cpu %v s; want a finite positive demand", n.CPU)
	case !finite(n.Serial) || n.Serial < 0:
		return fmt.Errorf("mva: D_serial %v s; want a finite demand, 0 or more", n.Serial)
	case !finite(n.Think) || n.Think < 0:
		return fmt.Errorf("mva: think time %v s; want a finite time, 0 or more", n.Think)
	}
	return nil
}

// Throughput is the network's calls per second with callers callers, by
// exact MVA.
func (n Network) Throughput(callers int) (float64, error) {
	if err := n.valid(); err != nil {
		return 0, err
	}
	if callers < 1 {
		return 0, fmt.Errorf("mva: %d callers; want at least one", callers)
	}
	perCPU := n.CPU / float64(n.CPUs)
	var qc, qs, x float64 // one CPU's queue (they are all alike), the serial centre's
	for k := 1; k <= callers; k++ {
		rc := perCPU * (1 + qc)
		rs := n.Serial * (1 + qs)
		x = float64(k) / (n.Think + float64(n.CPUs)*rc + rs)
		qc, qs = x*rc, x*rs
	}
	return x, nil
}

// ErrUnreachable: the measured throughput is above what the network
// reaches with no time outside the server at all; its demands are too
// large for it.
var ErrUnreachable = errors.New("mva: the demands cannot reach the measured throughput even with no think time")

// FitThink is the think time with which n (its Think ignored) serves
// callers callers at x calls per second. The throughput falls as the think
// time rises, so the root is unique; it is found by bisection to a
// relative 1e-9.
func FitThink(n Network, callers int, x float64) (float64, error) {
	if !finite(x) || x <= 0 {
		return 0, fmt.Errorf("mva: measured throughput %v/s; want a finite positive rate", x)
	}
	n.Think = 0
	top, err := n.Throughput(callers)
	if err != nil {
		return 0, err
	}
	if x > top {
		return 0, fmt.Errorf("%w (%.0f/s measured, %.0f/s at most)", ErrUnreachable, x, top)
	}
	lo, hi := 0.0, float64(callers)/x // X ≤ callers/think
	for range 200 {
		if hi-lo <= 1e-9*hi {
			break
		}
		n.Think = (lo + hi) / 2
		got, _ := n.Throughput(callers)
		if got > x {
			lo = n.Think
		} else {
			hi = n.Think
		}
	}
	return (lo + hi) / 2, nil
}

// Obs is one measured point: a design's demands and throughput at one work
// per command, CPU count and caller count.
type Obs struct {
	Work    float64 // seconds of work per command (the plan's -work)
	CPUs    int
	Callers int
	X       float64 // calls per second
	CPU     float64 // D_cpu, seconds per call
	Serial  float64 // D_serial, seconds per call; 0: none measured
}

// Line is a demand as a function of the work per command: A + B·work.
type Line struct{ A, B float64 }

// At is the line's value at work w.
func (l Line) At(w float64) float64 { return l.A + l.B*w }

// fitLine is the least-squares line through (x, y), or the mean where x
// has one value only.
func fitLine(x, y []float64) Line {
	if slices.Min(x) == slices.Max(x) {
		return Line{A: stat.Mean(y, nil)}
	}
	a, b := stat.LinearRegression(x, y, nil, false)
	return Line{A: a, B: b}
}

// Model is a design's fitted network, to be carried to other points.
type Model struct {
	CPU, Serial Line
	Think       float64
	// IgnoreSerial leaves the serial centre out: a model told that the
	// design has no contention.
	IgnoreSerial bool
}

// Fit fits a model to measured points (at least one): the demands as lines
// in the work, and the think time that best reproduces the points'
// throughput — least squares on log throughput, over a fine log-spaced
// grid and the mean of the think times that reproduce each point alone. A
// point where the server was saturated says little about the time
// outside it (its throughput hardly moves with it); least squares lets the
// points that do say decide. ignoreSerial fits and predicts without the
// serial centre.
func Fit(obs []Obs, ignoreSerial bool) (Model, error) {
	if len(obs) == 0 {
		return Model{}, errors.New("mva: no points to fit")
	}
	var ws, cpu, ser, think []float64
	for _, o := range obs {
		ws, cpu, ser = append(ws, o.Work), append(cpu, o.CPU), append(ser, o.Serial)
	}
	m := Model{CPU: fitLine(ws, cpu), Serial: fitLine(ws, ser), IgnoreSerial: ignoreSerial}
	for _, o := range obs {
		n := Network{CPUs: o.CPUs, CPU: o.CPU, Serial: o.Serial}
		if ignoreSerial {
			n.Serial = 0
		}
		z, err := FitThink(n, o.Callers, o.X)
		if errors.Is(err, ErrUnreachable) {
			z, err = 0, nil // as close as the network comes
		}
		if err != nil {
			return Model{}, err
		}
		think = append(think, z)
	}
	m.Think = stat.Mean(think, nil)
	// Least squares over a log-spaced grid of think times from 1 ns to
	// 100 ms (about 0.5% apart), starting with the mean above.
	best := m.Think
	bestSq := m.squares(obs, best)
	for k := range thinkGrid + 1 {
		z := 1e-9 * math.Pow(1e8, float64(k)/thinkGrid)
		if sq := m.squares(obs, z); sq < bestSq {
			best, bestSq = z, sq
		}
	}
	m.Think = best
	return m, nil
}

// thinkGrid is the number of steps of Fit's grid of think times.
const thinkGrid = 4000

// squares is the sum over the points of the squared log ratio of the
// network's throughput with think time z to the measured one.
func (m Model) squares(obs []Obs, z float64) float64 {
	var sum float64
	for _, o := range obs {
		n := Network{Think: z, CPUs: o.CPUs, CPU: o.CPU, Serial: o.Serial}
		if m.IgnoreSerial {
			n.Serial = 0
		}
		x, err := n.Throughput(o.Callers)
		if err != nil {
			return math.Inf(1)
		}
		sum += math.Pow(math.Log(x/o.X), 2)
	}
	return sum
}

// Network is the model's network at work w on cpus CPUs.
func (m Model) Network(w float64, cpus int) Network {
	n := Network{Think: m.Think, CPUs: cpus, CPU: m.CPU.At(w), Serial: m.Serial.At(w)}
	if m.IgnoreSerial {
		n.Serial = 0
	}
	return n
}

// Predict is the model's throughput, calls per second, at work w (seconds
// per command) on cpus CPUs with callers callers. A demand line that falls
// to zero or below at w is an error: the model cannot be carried there.
func (m Model) Predict(w float64, cpus, callers int) (float64, error) {
	n := m.Network(w, cpus)
	if n.Serial < 0 {
		return 0, fmt.Errorf("mva: D_serial %.3g s at work %v s; the fitted line cannot be carried there", n.Serial, w)
	}
	return n.Throughput(callers)
}

// Crossover is the work per command in [lo, hi] at which design a's
// predicted throughput first overtakes b's (from below or above), on cpus
// CPUs with callers callers; found is false when their order does not
// change sign in the range (equal throughput counts as a's ahead). The
// range is scanned in 256 steps for a change of sign, then bisected.
func Crossover(a, b Model, cpus, callers int, lo, hi float64) (w float64, found bool, err error) {
	diff := func(w float64) (float64, error) {
		xa, err := a.Predict(w, cpus, callers)
		if err != nil {
			return 0, err
		}
		xb, err := b.Predict(w, cpus, callers)
		return math.Log(xa / xb), err
	}
	prev, err := diff(lo)
	if err != nil {
		return 0, false, err
	}
	const steps = 256
	for i := 1; i <= steps; i++ {
		w1 := lo + (hi-lo)*float64(i)/steps
		d, err := diff(w1)
		if err != nil {
			return 0, false, err
		}
		if math.Signbit(d) != math.Signbit(prev) {
			w0 := lo + (hi-lo)*float64(i-1)/steps
			for range 100 {
				mid := (w0 + w1) / 2
				dm, _ := diff(mid)
				if math.Signbit(dm) == math.Signbit(prev) {
					w0 = mid
				} else {
					w1 = mid
				}
			}
			return (w0 + w1) / 2, true, nil
		}
		prev = d
	}
	return 0, false, nil
}
