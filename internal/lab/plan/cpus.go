package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ServerCPUs is the name of the factor that sets the server's CPUs: a
// count or a CPU set per value, the server pinned to it with GOMAXPROCS to
// match. The runner keeps the driver off those CPUs (or, asked, on them:
// Placement.Shared); the report's bottleneck section ranges over it.
const ServerCPUs = "server-cpus"

// cpusHalf is the default: the first half of the machine's CPUs, the driver
// on the rest, whatever the machine.
const cpusHalf = "half"

// maxCPU bounds what a value may name, far above any machine, so that a
// typo ("1000000") is an error rather than a huge set.
const maxCPU = 4096

// serverCPUsFactor is the row of Factors. Its values are canonical text:
// "half"; a count "N", the first N CPUs (0..N-1); or a set of CPUs written
// with ranges and joins, "2-3", "0+2", "0-1+4-5", "3-3" for CPU 3 alone.
// The list is comma-separated, so a set cannot use taskset's commas; a set
// that is the first N CPUs is written as the count N, so the two spellings
// are one value.
var serverCPUsFactor = &Factor{
	Name: ServerCPUs, JSON: "server_cpus", Label: "server CPUs", Default: cpusHalf,
	Usage: "comma-separated server CPUs, each a count N (the first N CPUs: 1,2,4) or a CPU set of ranges joined by + " +
		"(2-3, 0+2, 0-1+4-5, 3-3 for CPU 3 alone), or half (the first half; the driver gets the rest); " +
		"GOMAXPROCS matches each",
	Parse: parseServerCPUs,
	Encode: func(v string) any {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		return v
	},
	Decode: func(raw json.RawMessage) (string, error) {
		var n int
		if err := json.Unmarshal(raw, &n); err == nil {
			return strconv.Itoa(n), nil
		}
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	},
	ID: func(v string) string { return "-cpus" + strings.ReplaceAll(v, "+", ".") },
	Place: func(v string, p *Placement) {
		if set, ok := CPUSet(v); ok {
			p.Server = set
		}
	},
}

// parseServerCPUs reads one item of -server-cpus.
func parseServerCPUs(it string) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("-server-cpus: %q is not a CPU count (1, 2, 4), a CPU set of ranges joined by + (2-3, 0+2, 3-3) or half", it)
	}
	if it == cpusHalf {
		return it, nil
	}
	if !strings.ContainsAny(it, "-+") {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > maxCPU {
			return bad()
		}
		return strconv.Itoa(n), nil
	}
	var set []int
	for part := range strings.SplitSeq(it, "+") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		// Atoi takes a sign; a CPU number has none.
		if err1 != nil || err2 != nil || strings.ContainsAny(lo+hi, "+-") || a < 0 || b < a || b >= maxCPU {
			return bad()
		}
		for c := a; c <= b; c++ {
			set = append(set, c)
		}
	}
	slices.Sort(set)
	return formatCPUSet(slices.Compact(set)), nil
}

// formatCPUSet is a sorted set's canonical text: the count N for 0..N-1,
// otherwise ranges joined by + ("3-3" for a lone CPU).
func formatCPUSet(set []int) string {
	if set[len(set)-1] == len(set)-1 {
		return strconv.Itoa(len(set))
	}
	var parts []string
	for i := 0; i < len(set); {
		j := i
		for j+1 < len(set) && set[j+1] == set[j]+1 {
			j++
		}
		parts = append(parts, fmt.Sprintf("%d-%d", set[i], set[j]))
		i = j + 1
	}
	return strings.Join(parts, "+")
}

// CPUSet is the CPUs a -server-cpus value names, sorted; ok is false for
// "half", whose CPUs depend on the machine.
func CPUSet(v string) (set []int, ok bool) {
	if n, err := strconv.Atoi(v); err == nil {
		for c := range n {
			set = append(set, c)
		}
		return set, true
	}
	for part := range strings.SplitSeq(v, "+") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			return nil, false
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		for c := a; c <= b; c++ {
			set = append(set, c)
		}
	}
	return set, len(set) > 0
}

// StringWithout is String without the named factors: a series' heading
// over the factors' values.
func (p Point) StringWithout(names ...string) string {
	var parts []string
	p.shown(func(f *Factor, v string) {
		if !slices.Contains(names, f.Name) {
			parts = append(parts, f.Label+" "+v)
		}
	})
	return strings.Join(parts, ", ")
}
