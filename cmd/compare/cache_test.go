package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/run"
)

// TestCachePlan: -cache none,redis over a database runs the bank through
// the cache and without it for every design that serves it there, each
// run's server told -backend mysql and, with the cache, -cache redis; the
// counter runs once per design, in memory and uncached; a design that
// cannot serve the bank over a database is n/a. The catalog is the real
// server's answer to -list-modes under each value swept.
func TestCachePlan(t *testing.T) {
	bin, _, _ := binaries(t)
	cmd, err := parseFlags(strings.Fields("-workloads bank-A,counter -driver go -backend mysql -cache none,redis -modes mutex,db-rowlock,sharded -vus 10 -aa=false -reps 1"), io.Discard)
	require.NoError(t, err)
	cat, err := run.Catalog(bin, cmd.cfg.Factors)
	require.NoError(t, err)
	got := map[string]int{}
	for _, s := range plan.Layout(cmd.cfg.Config, cat, run.Serves) {
		args := strings.Join(s.Factors.ServerArgs(plan.RunDirs{}), " ")
		got[s.Workload+" "+s.Mode+" ["+args+"]"]++
	}
	assert.Equal(t, map[string]int{
		"bank-A mutex [-backend mysql]": 1, "bank-A mutex [-backend mysql -cache redis]": 1,
		"bank-A db-rowlock [-backend mysql]": 1, "bank-A db-rowlock [-backend mysql -cache redis]": 1,
		"counter mutex []": 1, "counter sharded []": 1,
	}, got)
	na := plan.NACells(cmd.cfg.Config, cat)
	assert.Contains(t, na, plan.NA{Workload: "bank-A", Mode: "sharded", Factor: plan.Backend, Value: "mysql",
		Reason: "sharded cannot serve the bank with its state in mysql"})
}
