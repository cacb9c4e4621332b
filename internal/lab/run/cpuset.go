package run

import (
	"slices"

	"github.com/prometheus/procfs"

	"github.com/locklab/locklab/internal/lab/record"
)

// cpuCounters are every CPU's cumulative times from /proc/stat, by CPU.
type cpuCounters map[int64]procfs.CPUStat

// readCPUCounters reads /proc/stat under fs (procfs.NewFS: the real /proc,
// or a fixture's root in a test).
func readCPUCounters(fs procfs.FS) (cpuCounters, error) {
	st, err := fs.Stat()
	if err != nil {
		return nil, err
	}
	return st.CPU, nil
}

// setTimes sums the counters of a CPU set (every CPU when the set is
// empty: the process was not pinned, the whole machine was its set).
func (c cpuCounters) setTimes(cpus []int) record.SetUsage {
	u := record.SetUsage{CPUs: slices.Clone(cpus)}
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

// setFields lists a SetUsage's counters, so that differences and
// interpolation treat every one alike.
func setFields(u *record.SetUsage) []*float64 {
	return []*float64{&u.User, &u.Nice, &u.System, &u.Idle, &u.Iowait, &u.IRQ, &u.SoftIRQ, &u.Steal}
}

// setLerp is a + f·(b − a), field by field, with a's CPUs.
func setLerp(a, b record.SetUsage, f float64) record.SetUsage {
	out := a
	fo, fa, fb := setFields(&out), setFields(&a), setFields(&b)
	for i := range fo {
		*fo[i] = *fa[i] + f*(*fb[i]-*fa[i])
	}
	return out
}

// setSub is b − a, field by field, with b's CPUs.
func setSub(b, a record.SetUsage) record.SetUsage {
	out := b
	fo, fa := setFields(&out), setFields(&a)
	for i := range fo {
		*fo[i] -= *fa[i]
	}
	return out
}
