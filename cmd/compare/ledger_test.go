package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/ledger"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/record"
)

// TestLedgerEndToEnd runs the real server under the runner with the ledger
// off and on: a traced run's record holds its ledger, which places nearly
// all of its calls' time, and the known answer of an owner design — its
// median call waits on a channel for the owner, the mutex's does not; an
// untraced run is the run it always was; every record carries the store's
// own clocks; the report has the section, the clocks beside the ledger, and
// says what tracing cost.
func TestLedgerEndToEnd(t *testing.T) {
	server, _, loadBin := binaries(t)
	out := t.TempDir()
	runCompare(t,
		"-driver", "go", "-workloads", "counter", "-modes", "mutex,inputQ", "-vus", "10", "-pin=false",
		"-ledger", "off,on", "-duration", "1s", "-warmup", "200ms", "-reps", "1", "-seed", "1",
		"-aa=false", "-max-foreign", "100%",
		"-server", server, "-load", loadBin, "-out", out,
	)
	records, err := record.Load(os.DirFS(out))
	require.NoError(t, err)
	require.Len(t, records, 4)

	chanAtMedian := map[string]float64{}
	for _, r := range records {
		require.Empty(t, r.Problems, r.ID)
		log, err := os.ReadFile(filepath.Join(out, "runs", r.ID+".server.log"))
		require.NoError(t, err)
		// The store's own clocks, traced or not: the server always keeps them.
		require.NotNil(t, r.Derived.Serial, r.ID)
		assert.True(t, r.Derived.Serial.HasWait(), "the wait clock in the record: %s", r.ID)
		if r.Mode == "inputQ" {
			assert.Positive(t, r.Derived.Serial.Batches, "an owner's runs: %s", r.ID)
		} else {
			assert.Zero(t, r.Derived.Serial.Batches, "a lock has no batch: %s", r.ID)
		}
		if r.Factors.Get(plan.Ledger) != plan.LedgerOn {
			assert.Nil(t, r.Ledger, r.ID)
			assert.NotContains(t, string(log), "metrics on", "no -metrics-addr: %s", r.ID)
			continue
		}
		require.NotNil(t, r.Ledger, r.ID)
		assert.Greater(t, r.Ledger.Calls, 100, r.ID)
		assert.GreaterOrEqual(t, r.Ledger.Accounted, 0.9, "the ledger places a call's time: %s", r.ID)
		chanAtMedian[r.Mode] = r.Ledger.AtP50Us[ledger.Chan]
	}
	assert.Greater(t, chanAtMedian["inputQ"], chanAtMedian["mutex"], "an owner's caller waits on a channel")
	entries, err := os.ReadDir(filepath.Join(out, "runs"))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".trace", "the trace is read, not kept")
	}

	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	for _, want := range []string{"## Where the time went", "### Where the time went · counter · go · ledger on · 10 callers",
		"### What tracing costs", "| counter · go · 10 callers | mutex | ", "| clock | mutex | inputQ | inputQ − mutex |"} {
		assert.Contains(t, string(md), want)
	}
}
