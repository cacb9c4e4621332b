package storebench

import (
	"strconv"
	"strings"
)

// CPUList is the -cpu list make bench-store runs on a machine of n CPUs:
// 1, 2 and every power of two up to n, and n itself if it is not one, so
// that the CPU chart's log-2 axis has a point at every doubling and at the
// machine's whole width. 2 is kept on a 1-CPU machine too: two Ps
// time-sharing one CPU still contend for the state, and the targets are
// set at 2.
func CPUList(n int) []int {
	out := []int{1, 2}
	for c := 4; c <= n; c *= 2 {
		out = append(out, c)
	}
	if last := out[len(out)-1]; n > last {
		out = append(out, n)
	}
	return out
}

// JoinCPUs renders a list as go test's -cpu flag wants it.
func JoinCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
