package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseList reads a flag's comma-separated list: no empty item, no item
// twice.
func ParseList(s, flagName string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("%s %q: empty item", flagName, s)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("%s %q: %q given twice", flagName, s, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseInts reads a comma list of whole numbers in lo..hi.
func ParseInts(s, flagName string, lo, hi int) ([]int, error) {
	items, err := ParseList(s, flagName)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(items))
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s: %q is not a whole number in %d..%d", flagName, it, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

// FormatFloat prints a factor's number as flags and ids take it.
func FormatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// CPUList prints a CPU set in taskset's syntax: "0,2".
func CPUList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
