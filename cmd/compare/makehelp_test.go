package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
	"github.com/locklab/locklab/internal/lab/seeds"
	"github.com/locklab/locklab/load"
	"github.com/locklab/locklab/workload/dbbank"
)

// TestMakeHelpFigures: every figure a `make help` line states — a default,
// a count, a duration, a study's time — is checked against what the code
// or the Makefile runs, and a line may state no figure that nothing checks.
// The controls: a Makefile with one figure changed on each kind of line,
// and one with an unchecked figure added, are each caught.
func TestMakeHelpFigures(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	e2e, err := os.ReadFile("../../k6/e2e.sh")
	require.NoError(t, err)
	assert.Empty(t, helpFigureProblems(t, string(mk), string(e2e)))

	controls := []struct{ name, from, to string }{
		{"a study's time", "(~5.9 min)", "(~9 min)"},
		{"the crossover's CPUs", "overtakes mutex at 2 server CPUs", "overtakes mutex at 4 server CPUs"},
		{"the capacity study's time", "(~9.3 min)", "(~5 min)"},
		{"a Makefile default", "1.5 s of every 6 s", "1.5 s of every 8 s"},
		{"the runner's ladder", "10…1000 VUs", "10…500 VUs"},
		{"a seed's constant", "20 in parallel", "10 in parallel"},
		{"the objective", "p99 ≤ 3× the noop server's floor", "p99 ≤ 2× the noop server's floor"},
		{"the driver agreement", "within 15%", "within 10%"},
		{"a runtime", "on go1.26.8 and go1.27.3", "on go1.26.8 and go1.28.0"},
		{"a database pool", "database pools of 1, 9 and 32", "database pools of 1, 8 and 32"},
		{"the bank seed over a database", "a pool of 9 and Redis", "a pool of 8 and Redis"},
		{"its designs", "SEED_DB_MODES        ?= mutex,inputQ,db-rowlock", "SEED_DB_MODES        ?= mutex,inputQ,db-rowlock,rwmutex,combining"},
		{"an unchecked figure", "invariants checked", "invariants checked (~4 min)"},
	}
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, string(mk), c.from)
			changed := strings.Replace(string(mk), c.from, c.to, 1)
			assert.NotEmpty(t, helpFigureProblems(t, changed, string(e2e)), "the control: %q → %q", c.from, c.to)
		})
	}
}

// helpFigure is a number a help line states: not part of a name (k6,
// h2load, p99).
var helpFigure = regexp.MustCompile(`(?:^|[^\w.])([0-9]+(?:\.[0-9]+)?)`)

// helpFigureProblems checks the help lines of the Makefile mk (e2e is
// k6/e2e.sh, which make agree runs).
func helpFigureProblems(t *testing.T, mk, e2e string) []string {
	t.Helper()
	m := newMakefile(mk)
	var probs []string
	problem := func(target, format string, args ...any) {
		probs = append(probs, "make help: "+target+": "+fmt.Sprintf(format, args...))
	}
	figure := func(target, help, pattern string) []string {
		f := regexp.MustCompile(pattern).FindStringSubmatch(help)
		if f == nil {
			problem(target, "states no %s", pattern)
			return nil
		}
		return f[1:]
	}
	// Each checker checks the figures of one target's line and returns
	// those it checked.
	checkers := map[string]func(target, help string) []string{
		"compare": func(target, help string) []string {
			cfg, took := defaultPlan(t)
			for _, p := range helpProblems(help, cfg, took) {
				problem(target, "%s", p)
			}
			return figure(target, help, `\(< ([0-9.]+) min\)$`)
		},
		"compare-busy": func(target, help string) []string {
			f := figure(target, help, `([0-9.]+) s of every ([0-9.]+) s`)
			if f != nil && (f[0] != m.value("BURST_ON") || f[1] != m.value("BURST_EVERY")) {
				problem(target, "states %s s of every %s s; BURST_ON is %s, BURST_EVERY %s", f[0], f[1], m.value("BURST_ON"), m.value("BURST_EVERY"))
			}
			return f
		},
		"cores": func(target, help string) []string {
			f := figure(target, help, `at ([0-9]+) and ([0-9]+) server CPUs`)
			if got := m.factorValues(t, target, plan.ServerCPUs); f != nil && !slices.Equal(f, got) {
				problem(target, "states server CPUs %v; its plans run %v", f, got)
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"crossover": func(target, help string) []string {
			f := figure(target, help, `overtakes mutex at ([0-9]+) server CPUs`)
			if got := m.factorValues(t, target, plan.ServerCPUs); f != nil && (len(got) < 2 || !slices.Contains(got[1:], f[0])) {
				problem(target, "states the crossover at %s server CPUs; its plan runs %v, the first of which the model is fitted at", f[0], got)
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"why": func(target, help string) []string {
			f := figure(target, help, `the ([0-9]+)-CPU ([0-9]+) µs case`)
			cpus, work := m.factorValues(t, target, plan.ServerCPUs), m.factorValues(t, target, "work")
			if f != nil && (!slices.Contains(cpus, f[0]) || !slices.Contains(work, f[1]+"µs")) {
				problem(target, "states the %s-CPU %s µs case; its plans run server CPUs %v, work %v", f[0], f[1], cpus, work)
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"runtimes": func(target, help string) []string {
			f := figure(target, help, `the ([0-9]+)-CPU ([0-9]+) µs case`)
			cpus, work := m.factorValues(t, target, plan.ServerCPUs), m.factorValues(t, target, "work")
			if f != nil && (!slices.Contains(cpus, f[0]) || !slices.Contains(work, f[1]+"µs")) {
				problem(target, "states the %s-CPU %s µs case; its plans run server CPUs %v, work %v", f[0], f[1], cpus, work)
			}
			for _, v := range m.factorValues(t, target, plan.Runtime) {
				if !strings.Contains(help, v) {
					problem(target, "does not name the runtime %s, which its plans run", v)
				}
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"bank-db": func(target, help string) []string {
			f := figure(target, help, `database pools of ([0-9]+), ([0-9]+) and ([0-9]+)`)
			if got := m.factorValues(t, target, plan.DBPool); f != nil && !slices.Equal(f, got) {
				problem(target, "states database pools %v; its plan runs %v", f, got)
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"capacity": func(target, help string) []string {
			var cc *run.Capacity
			for _, args := range m.runnerArgs(target) {
				cmd, err := parseFlags(args, io.Discard)
				require.NoError(t, err, target)
				cc = cmd.capacity
			}
			require.NotNil(t, cc, "make capacity runs -study capacity")
			var checked []string
			if f := figure(target, help, `at p99 ≤ ([0-9.]+)× the noop server's floor`); f != nil {
				if got := plan.FormatFloat(cc.FloorMultiple); f[0] != got {
					problem(target, "states the objective %s× the floor; the study sets it at %s× (-floor-multiple)", f[0], got)
				}
				checked = append(checked, f[0])
			}
			// The workloads and the designs, as the study's defaults name them.
			if f := figure(target, help, `→ [^:]+: ([^×]+) × ([^,]+),`); f != nil {
				if want := []string{strings.ReplaceAll(run.CapacityWorkloads, ",", ", "), strings.ReplaceAll(run.CapacityModes, ",", "/")}; !slices.Equal(f, want) {
					problem(target, "names %v; the study's defaults are %v", f, want)
				}
			}
			return append(checked, m.studyTime(t, target, help, problem)...)
		},
		"profile":       func(target, help string) []string { return m.studyTime(t, target, help, problem) },
		"seed-ngrinder": func(target, help string) []string { return m.studyTime(t, target, help, problem) },
		"seed-ladder": func(target, help string) []string {
			f := figure(target, help, `([0-9]+)…([0-9]+) VUs`)
			ladder := strings.Split(run.SeedLadder, ",")
			if f != nil && (f[0] != ladder[0] || f[1] != ladder[len(ladder)-1]) {
				problem(target, "states %s…%s VUs; the ladder is %s", f[0], f[1], run.SeedLadder)
			}
			return append(f, m.studyTime(t, target, help, problem)...)
		},
		"seed-bank": func(target, help string) []string {
			f := figure(target, help, `([0-9]+) in parallel`)
			if f != nil && f[0] != strconv.Itoa(seeds.BankConcurrency) {
				problem(target, "states %s in parallel; seeds.BankConcurrency is %d", f[0], seeds.BankConcurrency)
			}
			return f
		},
		"seed-bank-db": func(target, help string) []string {
			f := figure(target, help, `a pool of ([0-9]+) and Redis, ([0-9]+) in parallel.*\(~([0-9.]+) min\)$`)
			if f == nil {
				return nil
			}
			if f[0] != strconv.Itoa(dbbank.DefaultPool) || f[1] != strconv.Itoa(seeds.BankConcurrency) {
				problem(target, "states a pool of %s and %s in parallel; the server's -db-pool is %d, seeds.BankConcurrency %d",
					f[0], f[1], dbbank.DefaultPool, seeds.BankConcurrency)
			}
			est := seeds.BankDBEstimate(strings.Split(m.value("SEED_DB_MODES"), ","))
			stated, _ := strconv.ParseFloat(f[2], 64)
			if math.Abs(est.Minutes()-stated) > 0.5 || est > 6*time.Minute {
				problem(target, "states ~%s min; seeds.BankDBEstimate of SEED_DB_MODES %s says %v (within half a minute, and 6 min at most)",
					f[2], m.value("SEED_DB_MODES"), est.Round(time.Second))
			}
			return f
		},
		"seed-rpcx": func(target, help string) []string {
			f := figure(target, help, `a ([0-9]+)-byte value at ([0-9]+)…([0-9]+) clients`)
			levels := seeds.RPCXLevels
			if want := []string{strconv.Itoa(load.Workloads().KV.Defaults.ValueSize), strconv.Itoa(levels[0]), strconv.Itoa(levels[len(levels)-1])}; f != nil && !slices.Equal(f, want) {
				problem(target, "states %v; the seed sends %v", f, want)
			}
			return f
		},
		"fuzz": func(target, help string) []string {
			f := figure(target, help, `\(default ([0-9]+)s\)`)
			if f != nil && f[0]+"s" != m.value("FUZZTIME") {
				problem(target, "states %ss; FUZZTIME is %s", f[0], m.value("FUZZTIME"))
			}
			return f
		},
		"agree": func(target, help string) []string {
			f := figure(target, help, `within ([0-9]+)% .* ([0-9]+) calls/s`)
			share := regexp.MustCompile(`(?m)^agree:.*\n\tE2E_MODES=\S+ E2E_AGREE=([0-9.]+) `).FindStringSubmatch(mk)
			rate := regexp.MustCompile(`rate=\$\{E2E_AGREE_RATE:-([0-9]+)\}`).FindStringSubmatch(e2e)
			require.NotNil(t, share, "make agree sets E2E_AGREE")
			require.NotNil(t, rate, "k6/e2e.sh defaults E2E_AGREE_RATE")
			if v, _ := strconv.ParseFloat(share[1], 64); f != nil && (f[0] != strconv.Itoa(int(math.Round(v*100))) || f[1] != rate[1]) {
				problem(target, "states %s%% at %s calls/s; the recipe has E2E_AGREE=%s, e2e.sh %s calls/s", f[0], f[1], share[1], rate[1])
			}
			return f
		},
	}
	// make ledger's line states what make why's does: its 2-CPU case, and its time.
	checkers["ledger"] = checkers["why"]
	lines := regexp.MustCompile(`(?m)^([a-z0-9-]+):.*## (.*)$`).FindAllStringSubmatch(mk, -1)
	require.Greater(t, len(lines), 20, "the Makefile's help lines")
	for _, l := range lines {
		target, help := l[1], l[2]
		var checked []string
		if check, ok := checkers[target]; ok {
			checked = check(target, help)
		}
		for _, f := range helpFigure.FindAllStringSubmatch(help, -1) {
			if i := slices.Index(checked, f[1]); i >= 0 {
				checked = slices.Delete(checked, i, i+1)
				continue
			}
			problem(target, "states %s, which nothing checks against the code: check it in %s, or leave it out of the line", f[1], "cmd/compare/makehelp_test.go")
		}
	}
	return probs
}

// makefile is the Makefile's text, read as far as the checks need.
type makefile struct {
	text string
	vars map[string]string // as set (=, :=, ?=), the first setting of each
}

var (
	makeVar = regexp.MustCompile(`(?m)^([A-Z0-9_]+)\s*[:?]?=[ \t]*(.*)$`)
	makeRef = regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`)
)

func newMakefile(text string) makefile {
	m := makefile{text: text, vars: map[string]string{}}
	for _, v := range makeVar.FindAllStringSubmatch(text, -1) {
		if _, set := m.vars[v[1]]; !set {
			m.vars[v[1]] = strings.TrimSpace(v[2])
		}
	}
	return m
}

// value is a variable's value as the Makefile sets it, its $(VAR)
// references expanded; "" when it sets none.
func (m makefile) value(name string) string { return m.expand(m.vars[name]) }

func (m makefile) expand(s string) string {
	return makeRef.ReplaceAllStringFunc(s, func(ref string) string {
		return m.value(ref[2 : len(ref)-1])
	})
}

// runnerArgs are the runner's arguments on each of target's recipe lines
// that start it ($(RUNNER)), expanded; -out is left out.
func (m makefile) runnerArgs(target string) [][]string {
	recipe := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:.*\n((?:\t.*\n)+)`).FindStringSubmatch(m.text)
	if recipe == nil {
		return nil
	}
	var out [][]string
	for line := range strings.Lines(recipe[1]) {
		_, args, ok := strings.Cut(line, "$(RUNNER)")
		if !ok {
			continue
		}
		fields := strings.Fields(m.expand(args))
		if i := slices.Index(fields, "-out"); i >= 0 {
			fields = slices.Delete(fields, i, i+2)
		}
		out = append(out, fields)
	}
	return out
}

// factorValues are the values a factor takes over target's plans, in order,
// each once.
func (m makefile) factorValues(t *testing.T, target, factor string) []string {
	t.Helper()
	var out []string
	for _, args := range m.runnerArgs(target) {
		cmd, err := parseFlags(args, io.Discard)
		require.NoError(t, err, "make %s: %v", target, args)
		for _, v := range cmd.cfg.Factors.Values(factor) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// studyTime checks the time target's help line states, "(~N min)" or
// "(~N s)", against the runner's own estimate of its plans (the one it
// prints before the first run): within half a minute, or a tenth of the
// seconds stated. It returns the figure.
func (m makefile) studyTime(t *testing.T, target, help string, problem func(target, format string, args ...any)) []string {
	t.Helper()
	f := regexp.MustCompile(`\(~([0-9.]+) (min|s)\)`).FindStringSubmatch(help)
	if f == nil {
		problem(target, "states no time: end the line with (~N min) or (~N s), the runner's estimate")
		return nil
	}
	plans := m.runnerArgs(target)
	require.NotEmpty(t, plans, "make %s runs the runner", target)
	var total time.Duration
	for _, args := range plans {
		cmd, err := parseFlags(args, io.Discard)
		require.NoError(t, err, "make %s: %v", target, args)
		if cmd.capacity != nil {
			total += run.CapacityEstimate(cmd.cfg, *cmd.capacity)
			continue
		}
		if cmd.cfg.AllModes {
			cmd.cfg.Modes = serverCatalog().Names() // as Compare does
		}
		specs := plan.Layout(cmd.cfg.Config, serverCatalog(), run.Serves)
		require.NotEmpty(t, specs, "make %s: %v", target, args)
		total += run.PlanDuration(cmd.cfg, specs)
	}
	stated, err := strconv.ParseFloat(f[1], 64)
	require.NoError(t, err)
	unit, slack := time.Minute, 30*time.Second
	if f[2] == "s" {
		unit, slack = time.Second, time.Duration(stated/10*float64(time.Second))
	}
	if diff := total - time.Duration(stated*float64(unit)); diff > slack || diff < -slack {
		problem(target, "states ~%s %s; the runner estimates %v", f[1], f[2], total.Round(time.Second))
	}
	return []string{f[1]}
}
