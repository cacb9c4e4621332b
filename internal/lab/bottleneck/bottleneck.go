// Package bottleneck applies operational analysis to a design's measured
// demands (Denning & Buzen, "The operational analysis of queueing network
// models", Computing Surveys 1978; Lazowska, Zahorjan, Graham & Sevcik,
// Quantitative System Performance, 1984, ch. 5, asymptotic bounds).
//
// A call to a design needs two kinds of service:
//
//   - D_cpu, the server's CPU seconds per call, which N CPUs can supply in
//     parallel: throughput X ≤ N / D_cpu;
//   - D_serial, the seconds per call its single serial resource — the lock,
//     the owner goroutine, the combiner's role — is busy, which no number of
//     CPUs parallelises: X ≤ 1 / D_serial.
//
// Both are measured with the utilization law U = X·D, i.e. D = busy time /
// calls over the same interval (Demand). Then X(N) ≤ min(N/D_cpu, 1/D_serial),
// and N* = D_cpu/D_serial is the CPU count where the serial term takes over.
// The gap between a measured throughput and this bound is the design's
// coordination cost: time spent neither on useful CPU work nor queueing for
// the serial resource's service — handing off, waking up, cache lines
// moving between cores.
//
// The bound assumes the demands do not change with N. That is the model's
// part: a demand measured at one CPU count and applied at another predicts;
// at the CPU count it was measured at, X ≤ N/D_cpu holds by definition (the
// server cannot use more CPU than it has), so only a bound carried to other
// runs tests anything. Costs that grow with cores (cache-line transfers, lock
// convoys, wake-up latency, NUMA) are outside the model, and show as a gap.
//
// Intervals. Every quantity is an Interval: an estimate with lower and upper
// ends (give Lo = Est = Hi for a point). The bound, N* and the gap are
// monotone in each input, so their intervals are the values at the inputs'
// extreme corners — the interval each output takes as the inputs range over
// their intervals independently. If each input interval has coverage 1−a,
// the output's coverage is at least 1 − (number of inputs)·a (Bonferroni):
// two 95% demand intervals give a bound interval of at least 90%, three
// inputs (the gap) at least 85%. That is conservative where the inputs are
// correlated (both demands come from the same runs' throughput), which
// widens rather than narrows the result.
package bottleneck

import (
	"errors"
	"fmt"
	"math"
)

// Interval is an estimate with an interval around it, Lo ≤ Est ≤ Hi.
type Interval struct {
	Lo, Est, Hi float64
}

// Point is an interval of zero width.
func Point(x float64) Interval { return Interval{x, x, x} }

// Contains says whether x lies in the interval.
func (i Interval) Contains(x float64) bool { return i.Lo <= x && x <= i.Hi }

func (i Interval) valid(positive bool) error {
	for _, x := range []float64{i.Lo, i.Est, i.Hi} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("bottleneck: %+v: want finite values", i)
		}
		if positive && x <= 0 {
			return fmt.Errorf("bottleneck: %+v: want positive values", i)
		}
	}
	if !(i.Lo <= i.Est && i.Est <= i.Hi) {
		return fmt.Errorf("bottleneck: %+v: want Lo ≤ Est ≤ Hi", i)
	}
	return nil
}

// Demand is the utilization law's demand per call, D = U/X = busy/calls:
// the seconds a resource was busy over an interval divided by the calls
// completed in the same interval. busy is in seconds of the resource (CPU
// seconds for the CPU, wall-clock busy seconds for the serial resource).
func Demand(busySeconds float64, calls int64) (float64, error) {
	if calls <= 0 {
		return 0, fmt.Errorf("bottleneck: %d calls; want at least one", calls)
	}
	if math.IsNaN(busySeconds) || math.IsInf(busySeconds, 0) || busySeconds <= 0 {
		return 0, fmt.Errorf("bottleneck: busy time %v s; want a finite positive time", busySeconds)
	}
	return busySeconds / float64(calls), nil
}

// Model is one design's demands per call, in seconds.
type Model struct {
	CPU, Serial Interval
}

// NewModel checks the demands: finite, positive, Lo ≤ Est ≤ Hi.
func NewModel(cpu, serial Interval) (Model, error) {
	if err := cpu.valid(true); err != nil {
		return Model{}, fmt.Errorf("D_cpu: %w", err)
	}
	if err := serial.valid(true); err != nil {
		return Model{}, fmt.Errorf("D_serial: %w", err)
	}
	return Model{CPU: cpu, Serial: serial}, nil
}

var errCPUs = errors.New("bottleneck: CPU count must be finite and positive")

func checkCPUs(n float64) error {
	if math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
		return fmt.Errorf("%w, got %v", errCPUs, n)
	}
	return nil
}

// bound is min(n/cpu, 1/serial) for point demands.
func bound(n, cpu, serial float64) float64 { return math.Min(n/cpu, 1/serial) }

// Bound is the asymptotic upper bound on throughput, calls per second, with
// n CPUs: min(n/D_cpu, 1/D_serial). It falls as either demand rises, so its
// low end comes from the demands' high ends and its high end from their low
// ends. n may be fractional (a CPU quota).
func (m Model) Bound(n float64) (Interval, error) {
	if err := checkCPUs(n); err != nil {
		return Interval{}, err
	}
	return Interval{
		Lo:  bound(n, m.CPU.Hi, m.Serial.Hi),
		Est: bound(n, m.CPU.Est, m.Serial.Est),
		Hi:  bound(n, m.CPU.Lo, m.Serial.Lo),
	}, nil
}

// Knee is N* = D_cpu/D_serial, the CPU count beyond which the serial
// resource, not the CPUs, caps throughput. It rises with D_cpu and falls
// with D_serial.
func (m Model) Knee() Interval {
	return Interval{
		Lo:  m.CPU.Lo / m.Serial.Hi,
		Est: m.CPU.Est / m.Serial.Est,
		Hi:  m.CPU.Hi / m.Serial.Lo,
	}
}

// Term names which term of the bound binds.
type Term int

const (
	// CPUTerm: n < N* over all of N*'s interval; more CPUs would help.
	CPUTerm Term = iota + 1
	// SerialTerm: n > N* over all of N*'s interval; the serial resource
	// is the ceiling and more CPUs do not raise the bound.
	SerialTerm
	// EitherTerm: n lies within N*'s interval (or at N* exactly), so the
	// demands cannot tell which term binds.
	EitherTerm
)

func (t Term) String() string {
	switch t {
	case CPUTerm:
		return "CPU (N/D_cpu)"
	case SerialTerm:
		return "serial (1/D_serial)"
	case EitherTerm:
		return "either (N within N*'s interval)"
	}
	return fmt.Sprintf("Term(%d)", int(t))
}

// Binding says which term of the bound binds at n CPUs.
func (m Model) Binding(n float64) (Term, error) {
	if err := checkCPUs(n); err != nil {
		return 0, err
	}
	k := m.Knee()
	switch {
	case n < k.Lo:
		return CPUTerm, nil
	case n > k.Hi:
		return SerialTerm, nil
	}
	return EitherTerm, nil
}

// Gap is the coordination cost at n CPUs: the fraction of the bound the
// measured throughput (calls per second) falls short by, 1 − X/bound. It
// falls as X rises and rises with the bound, so its low end pairs X's high
// end with the bound's low end. A negative gap means the measurement beat
// the bound — a demand was mis-measured, or a demand changed with n, which
// the model assumes it does not; report it, do not clamp it.
func (m Model) Gap(n float64, measured Interval) (Interval, error) {
	b, err := m.Bound(n)
	if err != nil {
		return Interval{}, err
	}
	if err := measured.valid(false); err != nil {
		return Interval{}, fmt.Errorf("measured throughput: %w", err)
	}
	if measured.Lo < 0 {
		return Interval{}, fmt.Errorf("bottleneck: measured throughput %+v: want non-negative values", measured)
	}
	return Interval{
		Lo:  1 - measured.Hi/b.Lo,
		Est: 1 - measured.Est/b.Est,
		Hi:  1 - measured.Lo/b.Hi,
	}, nil
}
