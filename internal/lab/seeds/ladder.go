package seeds

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
)

// Ladder renders the k6 ladder: per VU level, the seed's parameters as rows
// (k6's summary lines) and the designs as columns, inputQ first as the seed
// printed them. Repetitions: the run of the median iterations/s stands for
// its cell.
func Ladder(meta record.Meta, runs []*record.Run) (string, error) {
	runs = slices.DeleteFunc(slices.Clone(runs), func(r *record.Run) bool { return r.Driver != "k6" || r.WorkloadDef().Kind != "counter" })
	if len(runs) == 0 {
		return "", errors.New("seeds: ladder: no k6 run of the counter in the folder (run it with -driver k6 -workloads counter)")
	}
	for _, r := range runs {
		if r.Result == nil || r.Result.K6 == nil {
			return "", fmt.Errorf("seeds: ladder: run %s has no k6 summary", r.ID)
		}
	}
	modes := modesOf(runs, "inputQ", "mutex")
	var levels []int
	for _, r := range runs {
		if !slices.Contains(levels, r.Level) {
			levels = append(levels, r.Level)
		}
	}
	slices.Sort(levels)
	var b strings.Builder
	b.WriteString("## Our runs\n\n")
	fmt.Fprintf(&b, "k6, closed model, each level measured for %s after a %s warm-up; %d repetition(s), the run of the median iterations/s shown.\n",
		meta.Duration, meta.Warmup, max(1, meta.Reps))
	for _, level := range levels {
		fmt.Fprintf(&b, "\n### Test case: %d virtual users (VUs)\n\n", level)
		head := append([]string{"Parameters"}, modes...)
		rows := [][]string{{"data_received"}, {"data_sent"}, {"grpc_req_duration"}, {"iteration_duration"}, {"iterations"}, {"runner's class"}}
		for _, m := range modes {
			r := medianRun(slices.DeleteFunc(slices.Clone(runs), func(r *record.Run) bool { return r.Mode != m || r.Level != level }))
			cells := ladderCells(r)
			for i := range rows {
				rows[i] = append(rows[i], cells[i])
			}
		}
		b.WriteString(table(head, rows))
	}
	b.WriteString("\n" + saturation(runs, modes))
	return b.String(), nil
}

// ladderCells are one run's column of the seed's table, in its rows' order.
func ladderCells(r *record.Run) []string {
	if r == nil {
		return []string{"—", "—", "—", "—", "—", "—"}
	}
	k := r.Result.K6
	secs := k.TestRunDurationMs / 1000
	rate := func(v float64) float64 {
		if secs <= 0 {
			return 0
		}
		return v / secs
	}
	iter := "—"
	if k.IterationMs != nil {
		iter = k6Trend(*k.IterationMs)
	}
	return []string{
		fmt.Sprintf("%s %s/s", k6Bytes(float64(k.DataReceivedBytes)), k6Bytes(rate(float64(k.DataReceivedBytes)))),
		fmt.Sprintf("%s %s/s", k6Bytes(float64(k.DataSentBytes)), k6Bytes(rate(float64(k.DataSentBytes)))),
		k6Trend(r.Result.LatencyMs),
		iter,
		mark(r, fmt.Sprintf("%d %f/s", k.Iterations, rate(float64(k.Iterations)))),
		fmt.Sprintf("%s (k6 %.0f%%, server %.0f%% of its CPUs)", r.Derived.Class, r.Derived.DriverUtil*100, r.Derived.ServerUtil*100),
	}
}

// LadderPublished is the seed's table, level by level.
func LadderPublished() string {
	var b strings.Builder
	for _, l := range ladderPublished {
		fmt.Fprintf(&b, "Test case: %d virtual users (VUs) for %s\n\n", l.VUs, l.Duration)
		rows := make([][]string, len(l.Rows))
		for i, r := range l.Rows {
			rows[i] = r[:]
		}
		b.WriteString(table([]string{"Parameters", "InputQ pattern", "Mutex pattern"}, rows))
		b.WriteString("\n")
	}
	return b.String()
}
