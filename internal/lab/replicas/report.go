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
		"with a quota of %g CPUs, refusing calls without the `x-key` header; in memory (`-backend memory`) unless the section says the replicas share a database.\n\n",
		res.Command, ResultsFile, res.CPUs, res.ReplicaCPUs)
	b.WriteString("One machine shows the hop's cost, what replicas do to correctness, and the CPU one call costs under a quota. " +
		"It cannot show capacity on several machines: here the replicas, the balancer and the driver share the same CPUs.\n\n")
	b.WriteString(answer(res))

	fmt.Fprintf(&b, "## Anomalies across %d replicas\n\n", res.AnomalyReplicas)
	fmt.Fprintf(&b, "Each design that keeps its state in memory under each front, %d callers, each workload for %s on freshly reset replicas. "+
		"**counter lost**: acknowledged increments that the replica holding the most does not show; "+
		"**bank overdrawn**: accounts the acknowledged transfers took below zero (money created); "+
		"**bank disagree**: accounts held by a replica that served them at a balance other than the acknowledged one; "+
		"**keys spread**: keys served by more than one replica (counter, bank); "+
		"**replicas broken**: replicas failing their own invariants. "+
		"These designs claim no safety across replicas: every row is a control. Round robin should show anomalies, key routing none.\n\n", res.Callers, res.AnomalyRun)
	head := []string{"design", "front", "claims safety", "counter lost", "bank overdrawn", "bank disagree", "keys spread", "replicas broken", "calls", "errors", "as expected"}
	var rows [][]string
	for _, r := range res.Anomalies {
		if r.DB {
			continue
		}
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
		rows = append(rows, []string{r.Design, r.Front, claims(r), cells["counter lost"], cells["bank overdrawn"], cells["bank disagree"],
			strings.Join(spread, ", "), fmt.Sprint(broken), fmt.Sprint(r.Calls), fmt.Sprint(r.Errors), ok})
	}
	b.WriteString(table(head, rows))

	fmt.Fprintf(&b, "\n## Over one database, across %d replicas\n\n", res.AnomalyReplicas)
	fmt.Fprintf(&b, "Every design that can keep the bank in a database (`-backend mysql`), its replicas sharing one private MariaDB "+
		"(a fresh database per row), under each front: the bank's transfers, %d callers for %s, each with a request id, "+
		"an attempt refused with `ABORTED` or without a definite answer retried with its id. The database is then audited "+
		"(internal/lab/fleet's Check): money conserved, no negative balance, every balance its seed plus the recorded transfers; "+
		"for a design that stores request ids, every acknowledged transfer stored once with the sequence number its answer gave. "+
		"**overdrawn**: accounts the acknowledged transfers took below zero; **audit failed**: the audit's rules that failed; "+
		"**fenced retries**: attempts refused with `ABORTED` (a replica had lost an account to another and took it back: a takeover each); "+
		"**unknown retries**: attempts without a definite answer. "+
		"A design claims safety across replicas when its registry row needs a database transaction per command or a fenced owner (`CapTx`, `CapOwned`): "+
		"it must show no anomaly and no failed call under every front. The others serialise in one process and claim nothing here: measured, not judged.\n\n",
		res.Callers, res.AnomalyRun)
	var dbRows [][]string
	for _, r := range res.Anomalies {
		if !r.DB {
			continue
		}
		over, unknown := 0, int64(0)
		var failed []string
		for _, f := range r.Findings {
			over += f.Overdrawn
			unknown += f.Unknown
			failed = append(failed, f.Failed...)
		}
		audit := "none"
		if len(failed) > 0 {
			audit = strings.Join(failed, "; ")
		}
		verdict := r.Verdict()
		if !r.Expected() {
			verdict = "**" + verdict + "**"
		}
		dbRows = append(dbRows, []string{r.Design, r.Front, claims(r), fmt.Sprint(over), audit, fmt.Sprint(r.Fenced()), fmt.Sprint(unknown),
			fmt.Sprint(r.Calls), fmt.Sprint(r.Errors), verdict})
	}
	b.WriteString(table([]string{"design", "front", "claims safety", "overdrawn", "audit failed", "fenced retries", "unknown retries", "calls", "errors", "verdict"}, dbRows))

	fmt.Fprintf(&b, "\n## The cost of the hop\n\n")
	fmt.Fprintf(&b, "The %s design, the kv workload's puts with %d callers, each key routed to one replica. "+
		"Each block runs every arm for %s in an order drawn for the block, one arm at a time (the driver is shared); %d blocks. "+
		"Each arm against `%s` in the same block: the geometric mean of the ratios, with its %.0f%% interval (internal/lab/paired). "+
		"**hop CPU** is the balancer's CPU and the driver's, per call.\n\n",
		res.CostDesign, res.Callers, res.Round, res.Blocks, Baseline.Name(), paired.Confidence*100)
	b.WriteString(costTable(Compare(res.Cost, Baseline.Name())))
	b.WriteString(everyDesign(res))

	fmt.Fprintf(&b, "\n## The cost over one database\n\n")
	fmt.Fprintf(&b, "The bank's transfers with %d callers, each with its pair's key and a request id, behind one front at one size, "+
		"every design over a database of its own on the one MariaDB. Rounds of %s, every arm once per block in an order drawn for the block, %d blocks; "+
		"each arm against `%s` in the same block, as above. **server CPU** is the replicas' own; the database's is not in it.\n\n",
		res.Callers, res.Round, res.Blocks, res.DBBaseline)
	b.WriteString(costTable(Compare(res.DBCost, res.DBBaseline)))
	b.WriteString("\n")
	var retries [][]string
	for _, c := range Compare(res.DBCost, res.DBBaseline) {
		if c.Metric != Metrics[0].Name {
			continue
		}
		var calls, fenced, unknown, errs int64
		for _, r := range res.DBCost {
			if r.Arm == c.Arm {
				calls, fenced, unknown, errs = calls+r.Calls, fenced+r.Fenced, unknown+r.Unknown, errs+r.Errors
			}
		}
		retries = append(retries, []string{c.Arm, fmt.Sprint(calls), fmt.Sprint(fenced), fmt.Sprint(unknown), fmt.Sprint(errs)})
	}
	b.WriteString(table([]string{"arm", "calls (all rounds)", "fenced retries (ABORTED)", "unknown retries", "errors"}, retries))

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

// everyDesign is the section of every design behind the balancer, when
// the results have its rounds (results saved before it have none).
func everyDesign(res *Results) string {
	if len(res.DesignCost) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Every design behind the balancer\n\n")
	fmt.Fprintf(&b, "How each design's cost changes once it is no longer the only serialiser: every design of the anomaly table that serves the kv workload "+
		"(%s), the kv workload's puts with %d callers, at %d replicas behind `%s` against the same design dialled at one replica. "+
		"Rounds of %s, every arm of every design once per block in an order drawn for the block, %d blocks, "+
		"chosen so that two arms per design fit the study's budget with enough blocks for an interval. "+
		"Each design's arm against its own `direct ×1` in the same block, paired as above.\n\n",
		strings.Join(res.Designs, ", "), res.Callers, res.DesignReplicas, res.DesignFront, res.DesignRound, res.DesignBlocks)
	var cs []Compared
	for _, d := range res.Designs {
		cs = append(cs, Compare(res.DesignRounds(d), DesignBaseline(d).Name())...)
	}
	b.WriteString(costTable(cs))
	return b.String()
}

// claims is the anomaly table's cell for the design's claim.
func claims(r AnomalyRow) string {
	switch {
	case r.Claims:
		return "yes"
	case r.DB:
		return "no"
	}
	return "no (a control)"
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

// answer opens the page: how many rows held to the study's rule, in
// memory and over the database, and the picture of the cost rounds.
func answer(res *Results) string {
	var b strings.Builder
	b.WriteString("## The answer\n\n")
	count := func(db bool) (held, all int) {
		for _, r := range res.Anomalies {
			if r.DB == db && (!db || r.Claims) {
				all++
				if r.Expected() {
					held++
				}
			}
		}
		return held, all
	}
	if held, all := count(false); all > 0 {
		fmt.Fprintf(&b, "- **In memory**: %d of %d rows as the rule says (anomalies under round robin, none under key routing).\n", held, all)
	}
	if held, all := count(true); all > 0 {
		fmt.Fprintf(&b, "- **Over one database**: the designs that claim safety across replicas held it in %d of %d rows (every front).\n", held, all)
	}
	if len(Forest(res).Rows) > 0 {
		fmt.Fprintf(&b, "\n![%s](%s)\n", Forest(res).Title, ForestFile)
	}
	b.WriteString("\n")
	return b.String()
}
