package ghz

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
	"github.com/locklab/locklab/summary"
)

// Every case of workloads.json is one ghz can send, or one it says why not.
func TestEveryCaseHasACallOrAReason(t *testing.T) {
	d := load.Workloads()
	for _, w := range load.WorkloadNames() {
		for _, c := range d.Cases(w) {
			key := w + "/" + c
			_, has := calls[key]
			_, why := unsupported[key]
			assert.True(t, has != why, "%s: want exactly one of a call or a reason", key)
			call, err := Lookup(w, c, "")
			if has {
				require.NoError(t, err, key)
				assert.Equal(t, c, call.Case)
				assert.Contains(t, call.Args(), call.Method)
			} else {
				assert.ErrorContains(t, err, "ghz cannot", key)
			}
		}
	}
	for key := range calls {
		w, c, _ := strings.Cut(key, "/")
		assert.Contains(t, d.Cases(w), c, "%s is not a case of workloads.json", key)
	}
}

// The transfer template's arithmetic: to = (from + k) mod N + 1 with k in
// 0..N-2 is an account, and never the sender.
func TestTransferPairsAreDistinct(t *testing.T) {
	n := load.Workloads().Bank.Defaults.Accounts
	call, err := Lookup("bank", "transfer", "A")
	require.NoError(t, err)
	assert.Contains(t, call.Data, "randomInt 0 "+strconv.Itoa(n-1)+")) "+strconv.Itoa(n)+")", "k is drawn from 0..N-2 (randomInt's upper bound is exclusive)")
	for from := 1; from <= n; from++ {
		for k := 0; k <= n-2; k++ {
			to := (from+k)%n + 1
			if to == from || to < 1 || to > n {
				t.Fatalf("from %d, k %d: to %d", from, k, to)
			}
		}
	}
}

func readSample(t *testing.T, name string) *Report {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	require.NoError(t, err)
	defer f.Close()
	rep, err := ReadReport(f)
	require.NoError(t, err)
	return rep
}

// testdata/transfer-B.json is a real ghz v0.121.0 run: 60 transfers in
// scenario B (even accounts empty), 4 workers on 2 connections.
func TestSummaryOfRefusedTransfers(t *testing.T) {
	rep := readSample(t, "transfer-B.json")
	call, err := Lookup("bank", "transfer", "B")
	require.NoError(t, err)
	s, err := rep.Summary(call, "B", "ghz v0.121.0")
	require.NoError(t, err)
	assert.Equal(t, summary.Schema, s.Schema)
	assert.Equal(t, "ghz", s.Driver)
	assert.Equal(t, "bank", s.Workload)
	assert.Equal(t, "B", s.Scenario)
	assert.Equal(t, "transfer:1", s.Mix)
	assert.Equal(t, 4, s.Callers)
	assert.Equal(t, 2, s.Conns)
	assert.Equal(t, int64(60), s.Calls)
	assert.Equal(t, int64(25), s.OK)
	assert.Equal(t, int64(35), s.ExpectedRefusals)
	assert.Zero(t, s.UnexpectedErrors)
	assert.Equal(t, map[string]int64{"OK": 25, "FAILED_PRECONDITION": 35}, s.ByCode)
	assert.Equal(t, int64(25), s.AckedTransfers)
	assert.Zero(t, s.AckedIncrementDelta)
	assert.InDelta(t, 0.419445447, s.DurationS, 1e-9)
	assert.InDelta(t, 60/0.419445447, s.CallsPerS, 1e-6)

	h, err := summary.DecodeHDR(s.HDR)
	require.NoError(t, err)
	assert.Equal(t, int64(60), h.TotalCount(), "every call's latency, refusals included")
	assert.Positive(t, s.LatencyMs.Min)
	assert.LessOrEqual(t, s.LatencyMs.P50, s.LatencyMs.P99)
	assert.LessOrEqual(t, s.LatencyMs.P99, s.LatencyMs.Max)
	assert.Equal(t, int64(60), s.ByCase["transfer"].Count)
	var perSec int64
	for _, n := range s.PerSecond {
		perSec += n
	}
	assert.Equal(t, int64(60), perSec)

	// The control: where the scenario expects no refusal, the same
	// answers are unexpected errors.
	callA, err := Lookup("bank", "transfer", "A")
	require.NoError(t, err)
	sA, err := rep.Summary(callA, "A", "")
	require.NoError(t, err)
	assert.Equal(t, int64(35), sA.UnexpectedErrors)
	assert.Zero(t, sA.ExpectedRefusals)
}

// testdata/increment.json: the counter for 40 ms (-z) with every call in
// flight at the end waited for (--duration-stop wait).
func TestSummaryOfIncrements(t *testing.T) {
	rep := readSample(t, "increment.json")
	call, err := Lookup("counter", "", "")
	require.NoError(t, err)
	assert.Equal(t, "increment", call.Case)
	s, err := rep.Summary(call, "", "")
	require.NoError(t, err)
	assert.Equal(t, int64(262), s.Calls)
	assert.Equal(t, int64(262), s.OK)
	assert.Equal(t, int64(262)*load.Workloads().Counter.Defaults.Delta, s.AckedIncrementDelta)
	assert.Equal(t, "closed", s.Model)
	assert.Empty(t, s.Scenario)
}

func TestBadInput(t *testing.T) {
	good, err := os.ReadFile("testdata/transfer-B.json")
	require.NoError(t, err)
	reports := []struct{ name, json, want string }{
		{"not JSON", "{", "ghz: report"},
		{"truncated", string(good[:len(good)/2]), "ghz: report"},
		{"no calls", `{"count":0}`, "no call completed"},
		{"details missing", `{"count":2,"details":[{"latency":1,"status":"OK"}]}`, "2 calls but 1 details"},
	}
	for _, tt := range reports {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadReport(strings.NewReader(tt.json))
			assert.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("statuses that do not add up", func(t *testing.T) {
		rep, err := ReadReport(strings.NewReader(`{"count":2,"total":1000000,"statusCodeDistribution":{"OK":1},"details":[{"latency":1000,"status":"OK"},{"latency":1000,"status":"OK"}]}`))
		require.NoError(t, err)
		call, _ := Lookup("counter", "", "")
		_, err = rep.Summary(call, "", "")
		assert.ErrorContains(t, err, "add up to 1")
	})
	lookups := []struct{ workload, kase, scenario, want string }{
		{"queue", "", "", `unknown workload "queue"`},
		{"bank", "withdraw", "", `bank has no case "withdraw"`},
		{"bank", "transfer", "Z", `bank scenario "Z"`},
		{"kv", "get", "", "NOT_FOUND"},
	}
	for _, tt := range lookups {
		_, err := Lookup(tt.workload, tt.kase, tt.scenario)
		assert.ErrorContains(t, err, tt.want, "%s/%s", tt.workload, tt.kase)
	}
}
