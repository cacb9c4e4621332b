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
)

// TestMakeHelpFigures: every figure a `make help` line states — a default,
// a duration, a run's time — is checked against what the code or the
// Makefile runs, and a line may state no figure that nothing checks (the
// studies' times come from the catalogue: make help prints -study list).
// The controls: a Makefile with one figure changed on each kind of line,
// and one with an unchecked figure added, are each caught.
func TestMakeHelpFigures(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	e2e, err := os.ReadFile("../../k6/e2e.sh")
	require.NoError(t, err)
	assert.Empty(t, helpFigureProblems(t, string(mk), string(e2e)))

	controls := []struct{ name, from, to string }{
		{"the background load's default", "1.5 s of every 6 s", "1.5 s of every 8 s"},
		{"a run's time", "(~6 s)", "(~60 s)"},
		{"the fuzzing time", "(default 20s)", "(default 30s)"},
		{"the driver agreement", "within 15%", "within 10%"},
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
	b, err := os.ReadFile("../../scripts/burst.sh")
	require.NoError(t, err)
	burst := string(b)
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
			on := regexp.MustCompile(`on=\$\{BURST_ON:-([0-9.]+)\}`).FindStringSubmatch(burst)
			every := regexp.MustCompile(`every=\$\{BURST_EVERY:-([0-9.]+)\}`).FindStringSubmatch(burst)
			require.NotNil(t, on, "scripts/burst.sh defaults BURST_ON")
			require.NotNil(t, every, "scripts/burst.sh defaults BURST_EVERY")
			if f != nil && (f[0] != on[1] || f[1] != every[1]) {
				problem(target, "states %s s of every %s s; scripts/burst.sh's defaults are %s and %s", f[0], f[1], on[1], every[1])
			}
			return f
		},

		"profile": func(target, help string) []string { return m.studyTime(t, target, help, problem) },
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
	lines := regexp.MustCompile(`(?m)^([a-z0-9-]+):.*## (.*)$`).FindAllStringSubmatch(mk, -1)
	require.Greater(t, len(lines), 10, "the Makefile's help lines")
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

// studyTime checks the time target's help line states, "(~N min)" or
// "(~N s)", against the runner's own estimate of its plan (the one it
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
		total += planEstimate(cmd)
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
