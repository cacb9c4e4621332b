package replicas

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/paired"
)

// ngrinderScaleOut is the nGrinder post's second half as the lab recorded
// it: average TPS with one server, then with two behind nginx. It was
// measured on the post's machines, with its own service, not here.
var ngrinderScaleOut = []struct{ Servers, TPS string }{
	{"1", "about 450"},
	{"2 behind nginx", "about 667"},
}

// Report renders the study's page from its results; nil results render
// the page of a study not run yet.
func Report(res *Results) string {
	var b strings.Builder
	b.WriteString("# Replicas\n\n")
	if res == nil {
		b.WriteString("Not run yet: `make replicas` runs the study and writes this page from its results (`docs/replicas.md` says what it measures).\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Written by `%s` from `%s` beside it. The machine has %d CPUs; every replica runs on a host of its own "+
		"with a quota of %g CPUs, in memory (`-backend memory`), refusing calls without the `x-key` header.\n\n",
		res.Command, ResultsFile, res.CPUs, res.ReplicaCPUs)
	b.WriteString("One machine shows the hop's cost, what replicas do to correctness, and the CPU one call costs under a quota. " +
		"It cannot show capacity on several machines: here the replicas, the balancer and the driver share the same CPUs.\n\n")

	fmt.Fprintf(&b, "## Anomalies across %d replicas\n\n", res.AnomalyReplicas)
	fmt.Fprintf(&b, "Each design under each front, %d callers, each workload for %s on freshly reset replicas. "+
		"**counter lost**: acknowledged increments that the replica holding the most does not show; "+
		"**bank overdrawn**: accounts the acknowledged transfers took below zero (money created); "+
		"**bank disagree**: accounts held by a replica that served them at a balance other than the acknowledged one; "+
		"**keys spread**: keys served by more than one replica (counter, bank); "+
		"**replicas broken**: replicas failing their own invariants. "+
		"Round robin should show anomalies, key routing none.\n\n", res.Callers, res.AnomalyRun)
	head := []string{"design", "front", "counter lost", "bank overdrawn", "bank disagree", "keys spread", "replicas broken", "calls", "errors", "as expected"}
	var rows [][]string
	for _, r := range res.Anomalies {
		cells := map[string]string{"counter lost": "—", "bank overdrawn": "—", "bank disagree": "—"}
		var spread []string
		broken := 0
		for _, f := range r.Findings {
			switch f.Workload {
			case Counter:
				cells["counter lost"] = fmt.Sprint(f.Lost)
			case Bank:
				cells["bank overdrawn"], cells["bank disagree"] = fmt.Sprint(f.Overdrawn), fmt.Sprint(f.Disagree)
			}
			spread = append(spread, fmt.Sprint(f.Spread))
			broken += f.ReplicaBroken
		}
		ok := "yes"
		if !r.Expected() {
			ok = "**no**"
		}
		rows = append(rows, []string{r.Design, r.Front, cells["counter lost"], cells["bank overdrawn"], cells["bank disagree"],
			strings.Join(spread, ", "), fmt.Sprint(broken), fmt.Sprint(r.Calls), fmt.Sprint(r.Errors), ok})
	}
	b.WriteString(table(head, rows))

	fmt.Fprintf(&b, "\n## The cost of the hop\n\n")
	fmt.Fprintf(&b, "The %s design, the kv workload's puts with %d callers, each key routed to one replica. "+
		"Each block runs every arm for %s in an order drawn for the block, one arm at a time (the driver is shared); %d blocks. "+
		"Each arm against `%s` in the same block: the geometric mean of the ratios, with its %.0f%% interval (internal/lab/paired). "+
		"**hop CPU** is the balancer's CPU and the driver's, per call.\n\n",
		res.CostDesign, res.Callers, res.Round, res.Blocks, Baseline.Name(), paired.Confidence*100)
	b.WriteString(costTable(Compare(res.Cost, Baseline.Name())))

	b.WriteString("\n## The nGrinder scale-out\n\n")
	fmt.Fprintf(&b, "The post's second half: one server, then two behind nginx. Here: the bank's transfers, %d callers, "+
		"the %s design, nginx routing each pair of accounts to one replica; rounds of %s alternated.\n\n", NGrinderCallers, res.CostDesign, res.Round)
	var ng [][]string
	for _, c := range Compare(res.NGrinder, Baseline.Name()) {
		if c.Metric != Metrics[0].Name {
			continue
		}
		var errs int64
		for _, r := range res.NGrinder {
			if r.Arm == c.Arm {
				errs += r.Errors
			}
		}
		published := "—"
		if k := slices.IndexFunc(NGrinderArms, func(a Arm) bool { return a.Name() == c.Arm }); k >= 0 && k < len(ngrinderScaleOut) {
			published = ngrinderScaleOut[k].Servers + ": " + ngrinderScaleOut[k].TPS
		}
		ng = append(ng, []string{c.Arm, fmt.Sprintf("%.0f", c.Median), effect(c), fmt.Sprint(errs), published})
	}
	b.WriteString(table([]string{"servers", "TPS (median of rounds)", "against one server", "errors", "the post's TPS (its machines)"}, ng))

	b.WriteString("\n## The rpcx page's one client, two servers\n\n")
	fmt.Fprintf(&b, "The page's columns: the in-process Go driver, balancing over two replicas in the client, "+
		"puts the kv workload's value at each of the page's levels for %s. **bottleneck** is the side that ran out first: "+
		"the servers at %.0f%% of their quota, else the driver at %.0f%% of the CPUs the quotas leave.\n\n", res.Round, Saturated*100, Saturated*100)
	var rp [][]string
	for _, l := range res.RPCX {
		rp = append(rp, []string{fmt.Sprint(l.Clients), ms(l.MeanMs), ms(l.MedianMs), ms(l.MaxMs), ms(l.MinMs), ms(l.P99Ms),
			fmt.Sprintf("%.0f", l.TPS), fmt.Sprint(l.Errors), fmt.Sprintf("%.0f%%", l.QuotaUse*100), fmt.Sprintf("%.2f", l.DriverCPUs), l.Bottleneck})
	}
	b.WriteString(table([]string{"concurrent clients", "mean (ms)", "median (ms)", "max (ms)", "min (ms)", "p99 (ms)", "TPS", "errors", "servers' quota used", "driver CPUs", "bottleneck"}, rp))
	return b.String()
}

// costTable is one row per arm: each metric's median and its ratio to the
// baseline.
func costTable(cs []Compared) string {
	head := []string{"arm"}
	for _, m := range Metrics {
		head = append(head, m.Name, "× baseline")
	}
	var rows [][]string
	for i := 0; i+len(Metrics) <= len(cs); i += len(Metrics) {
		row := []string{cs[i].Arm}
		for _, c := range cs[i : i+len(Metrics)] {
			row = append(row, figure(c.Median), effect(c))
		}
		rows = append(rows, row)
	}
	return table(head, rows)
}

// figure prints a median: whole numbers from a thousand up.
func figure(v float64) string {
	if math.Abs(v) >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// effect is a comparison's ratio with its interval.
func effect(c Compared) string {
	switch {
	case c.Err != "":
		return "no ratio: " + c.Err
	case c.Effect.N == 0:
		return "baseline"
	case math.IsInf(c.Effect.Hi, 1):
		return fmt.Sprintf("%.3f (one block)", c.Effect.GeoMean)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", c.Effect.GeoMean, c.Effect.Lo, c.Effect.Hi)
}

func table(head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}
