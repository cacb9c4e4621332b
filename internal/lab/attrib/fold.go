package attrib

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/google/pprof/profile"
)

// ErrNotCPU is returned (wrapped) by Fold for a profile with no CPU time
// among its sample types: a heap or goroutine profile, say.
var ErrNotCPU = errors.New("attrib: not a CPU profile")

// Breakdown is a CPU profile folded into the categories.
type Breakdown struct {
	Period  time.Duration // between samples, as the profile states it
	Wall    time.Duration // how long the profile ran, as it states it (0 if not)
	Samples int64         // samples folded (stacks × their counts)
	Total   time.Duration // CPU time of every sample
	// CPU is the CPU time of each category of Categories, every one a key
	// (0 where no sample fell), summing to Total.
	CPU map[string]time.Duration
}

// Share is the fraction of Total in the named category (0 for an empty
// profile or an unknown name).
func (b Breakdown) Share(name string) float64 {
	if b.Total <= 0 {
		return 0
	}
	return float64(b.CPU[name]) / float64(b.Total)
}

// Fold adds up the CPU time of p's samples by category (Classify over each
// sample's stack, inlined frames included). It reads the sample value
// whose type is cpu/nanoseconds, as Go's runtime/pprof writes it, and
// refuses a profile that has none (ErrNotCPU), an invalid one, or a
// negative value; it does not change p.
func Fold(p *profile.Profile) (Breakdown, error) {
	if p == nil {
		return Breakdown{}, errors.New("attrib: nil profile")
	}
	if err := p.CheckValid(); err != nil {
		return Breakdown{}, fmt.Errorf("attrib: %w", err)
	}
	vi, ni := valueIndex(p, "cpu", "nanoseconds"), valueIndex(p, "samples", "count")
	if vi < 0 {
		return Breakdown{}, fmt.Errorf("%w: sample types %s", ErrNotCPU, sampleTypes(p))
	}
	b := Breakdown{Wall: time.Duration(p.DurationNanos), CPU: map[string]time.Duration{}}
	if pt := p.PeriodType; pt != nil && pt.Type == "cpu" && pt.Unit == "nanoseconds" {
		b.Period = time.Duration(p.Period)
	}
	for _, name := range CategoryNames() {
		b.CPU[name] = 0
	}
	var stack []string
	for _, s := range p.Sample {
		v := s.Value[vi]
		if v < 0 {
			return Breakdown{}, fmt.Errorf("attrib: sample with negative CPU %d ns", v)
		}
		stack = stack[:0]
		for _, loc := range s.Location {
			for _, ln := range loc.Line { // leaf-most (inlined) first
				if ln.Function != nil {
					stack = append(stack, ln.Function.Name)
				}
			}
		}
		b.CPU[Classify(stack)] += time.Duration(v)
		b.Total += time.Duration(v)
		switch {
		case ni >= 0:
			b.Samples += s.Value[ni]
		case b.Period > 0:
			b.Samples += v / int64(b.Period)
		}
	}
	return b, nil
}

// valueIndex is the index of p's sample type typ/unit, or -1.
func valueIndex(p *profile.Profile, typ, unit string) int {
	return slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool {
		return st.Type == typ && st.Unit == unit
	})
}

func sampleTypes(p *profile.Profile) string {
	s := "["
	for i, st := range p.SampleType {
		if i > 0 {
			s += " "
		}
		s += st.Type + "/" + st.Unit
	}
	return s + "]"
}

// FoldFile reads the profile file name of fsys (as /debug/pprof/profile
// serves it, gzipped protobuf) and folds it: a run's profile beside its
// record, in runs/ or in the archive a study was packed into
// (record.Open).
func FoldFile(fsys fs.FS, name string) (Breakdown, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return Breakdown{}, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return Breakdown{}, fmt.Errorf("attrib: %s: %w", name, err)
	}
	b, err := Fold(p)
	if err != nil {
		return Breakdown{}, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// Cost is a Breakdown divided by the calls served while it was profiled.
type Cost struct {
	Calls int64
	Total float64            // µs of CPU per call
	Micro map[string]float64 // µs of CPU per call by category, every one a key
}

// PerCall divides b by calls, the calls served over the profile's window.
// calls must be positive.
func PerCall(b Breakdown, calls int64) (Cost, error) {
	if calls <= 0 {
		return Cost{}, fmt.Errorf("attrib: %d calls: want > 0", calls)
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(calls) }
	c := Cost{Calls: calls, Total: us(b.Total), Micro: map[string]float64{}}
	for _, name := range CategoryNames() {
		c.Micro[name] = us(b.CPU[name])
	}
	return c, nil
}
