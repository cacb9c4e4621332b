package cpuset

import (
	"math"
	"slices"

	"github.com/prometheus/procfs"
)

// Counters are every CPU's cumulative times from /proc/stat, by CPU.
// Two readings, a window apart, give a CPU set's usage over the window:
// b.Set(cpus).Minus(a.Set(cpus)).
type Counters map[int64]procfs.CPUStat

// Read reads /proc/stat under fs (procfs.NewDefaultFS: the real
// /proc, or procfs.NewFS on a fixture's root in a test).
func Read(fs procfs.FS) (Counters, error) {
	st, err := fs.Stat()
	if err != nil {
		return nil, err
	}
	return st.CPU, nil
}

// Set sums the counters of a CPU set (every CPU when the set is empty: the
// process was not pinned, the whole machine was its set).
func (c Counters) Set(cpus []int) Usage {
	u := Usage{CPUs: slices.Clone(cpus)}
	for id, s := range c {
		if len(cpus) > 0 && !slices.Contains(cpus, int(id)) {
			continue
		}
		u.User += s.User
		u.Nice += s.Nice
		u.System += s.System
		u.Idle += s.Idle
		u.Iowait += s.Iowait
		u.IRQ += s.IRQ
		u.SoftIRQ += s.SoftIRQ
		u.Steal += s.Steal
	}
	return u
}

// fields lists a Usage's counters, so that differences and
// interpolation treat every one alike.
func (u *Usage) fields() []*float64 {
	return []*float64{&u.User, &u.Nice, &u.System, &u.Idle, &u.Iowait, &u.IRQ, &u.SoftIRQ, &u.Steal}
}

// Minus is u − a, field by field, with u's CPUs: the set's time between
// reading a and reading u.
func (u Usage) Minus(a Usage) Usage {
	out := u
	fo, fa := out.fields(), a.fields()
	for i := range fo {
		*fo[i] -= *fa[i]
	}
	return out
}

// Lerp is a + f·(b − a), field by field, with a's CPUs: the counters
// at a moment between two readings.
func Lerp(a, b Usage, f float64) Usage {
	out := a
	fo, fa, fb := out.fields(), a.fields(), b.fields()
	for i := range fo {
		*fo[i] = *fa[i] + f*(*fb[i]-*fa[i])
	}
	return out
}

// Round rounds every time to a multiple of unit seconds: the kernel counts
// in 10 ms ticks, and a difference of two readings carries float noise
// below that.
func (u Usage) Round(unit float64) Usage {
	for _, f := range u.fields() {
		*f = math.Round(*f/unit) * unit
	}
	return u
}
