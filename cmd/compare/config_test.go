package main

import (
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsDefaults(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"mutex", "inputQ", "noop"}, cfg.Modes)
	assert.Equal(t, []string{"go", "h2load"}, cfg.Drivers)
	assert.Equal(t, []int{10, 100, 1000}, cfg.Levels)
	assert.Equal(t, []int{100}, cfg.H2loadLevels)
	assert.Equal(t, "closed", cfg.Model)
	assert.Equal(t, defaultDuration, cfg.Duration)
	assert.Equal(t, 5, cfg.Reps, "five repetitions: a U test can reach p < 0.01")
	require.Len(t, cfg.Workloads, 2)
	assert.Equal(t, "counter", cfg.Workloads[0].Name)
	assert.Equal(t, Workload{Name: "bank-A", Kind: "bank", Script: "bank.js", Scenario: "A"}, cfg.Workloads[1])
	assert.Equal(t, []Factors{defaultFactors}, cfg.Factors.combos())
	if runtime.NumCPU() == 2 {
		assert.Equal(t, []int{0}, cfg.ServerCPUs)
		assert.Equal(t, []int{1}, cfg.DriverCPUs)
	}
}

// TestDefaultPlanFitsTheBudget: make compare must finish within 8 minutes
// on a 2-CPU machine; the plan's runs at their configured length, plus what
// a run costs to start, connect and stop, must leave room to build.
func TestDefaultPlanFitsTheBudget(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	specs := plan(cfg)
	assert.Len(t, specs, 2*3*3*5+3*5, "go: 2 workloads × 3 levels × 3 modes × 5 reps; h2load: counter at 100 × 3 modes × 5 reps")
	assert.Less(t, planDuration(cfg, specs), 7*time.Minute+30*time.Second)
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, cfg Config)
	}{
		{name: "ladder", args: []string{"-driver", "k6", "-ladder"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{10, 100, 200, 300, 500, 1000}, cfg.Levels)
			assert.Equal(t, []string{"k6"}, cfg.Drivers)
		}},
		{name: "bank means bank-A", args: []string{"-workloads", "bank,kv"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, "bank-A", cfg.Workloads[0].Name)
			assert.Equal(t, "kv", cfg.Workloads[1].Name)
		}},
		{name: "open model", args: []string{"-driver", "go", "-model", "open", "-rates", "500,1000"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{500, 1000}, cfg.Levels)
		}},
		{name: "factors", args: []string{"-work", "0,10us", "-durability", "none,wal", "-skew", "0,0.99", "-read-ratio", "default,0.9"},
			check: func(t *testing.T, cfg Config) {
				assert.Equal(t, []time.Duration{0, 10 * time.Microsecond}, cfg.Factors.Works)
				assert.Equal(t, []string{"none", "wal"}, cfg.Factors.Durabilities)
				assert.Equal(t, []float64{0, 0.99}, cfg.Factors.Skews)
				assert.Equal(t, []float64{defaultReadRatio, 0.9}, cfg.Factors.ReadRatios)
				assert.Len(t, cfg.Factors.combos(), 16)
			}},
		{name: "no pinning", args: []string{"-pin=false"}, check: func(t *testing.T, cfg Config) {
			assert.Nil(t, cfg.ServerCPUs)
			assert.Nil(t, cfg.DriverCPUs)
		}},
		{name: "unknown workload", args: []string{"-workloads", "counter,nosuch"}, wantErr: `unknown workload "nosuch"; workloads: bank-A, bank-B, bank-C, counter, kv`},
		{name: "unknown driver", args: []string{"-driver", "go,wrk"}, wantErr: `-driver: unknown driver "wrk"; drivers: go, k6, h2load`},
		{name: "empty item", args: []string{"-modes", "mutex,,inputQ"}, wantErr: "empty item"},
		{name: "duplicate", args: []string{"-modes", "mutex,mutex"}, wantErr: `"mutex" given twice`},
		{name: "vus not a number", args: []string{"-vus", "10,x"}, wantErr: `-vus: "x" is not a whole number in 1..5000`},
		{name: "vus zero", args: []string{"-vus", "0"}, wantErr: "not a whole number in 1..5000"},
		{name: "bad model", args: []string{"-model", "half-open"}, wantErr: `-model "half-open": want closed or open`},
		{name: "open without rates", args: []string{"-model", "open"}, wantErr: "-model open needs -rates"},
		{name: "open with h2load", args: []string{"-model", "open", "-rates", "100"}, wantErr: "-driver h2load runs the closed model only"},
		{name: "rates with closed", args: []string{"-rates", "100"}, wantErr: "-rates goes with -model open"},
		{name: "short duration", args: []string{"-duration", "500ms"}, wantErr: "want at least 1s"},
		{name: "negative warmup", args: []string{"-warmup", "-1s"}, wantErr: "want 0 or more"},
		{name: "h2load without warm-up", args: []string{"-warmup", "0"}, wantErr: "-driver h2load needs a warm-up"},
		{name: "zero reps", args: []string{"-reps", "0"}, wantErr: "-reps 0: want 1..100"},
		{name: "bad work", args: []string{"-work", "0,fast"}, wantErr: `-work: "fast" is not a duration`},
		{name: "bad durability", args: []string{"-durability", "none,fsync"}, wantErr: `-durability: "fsync": want none or wal`},
		{name: "bad skew", args: []string{"-skew", "-1"}, wantErr: `-skew: "-1" is not a number in 0..1`},
		{name: "skew one", args: []string{"-skew", "0,1"}, wantErr: "want 0 ≤ θ < 1"},
		{name: "bad read ratio", args: []string{"-read-ratio", "1.5"}, wantErr: `-read-ratio: "1.5" is not a number in 0..1 or default`},
		{name: "stray argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"-nosuch"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, cfg)
		})
	}
}

func TestCPUSets(t *testing.T) {
	tests := []struct {
		name           string
		pin            bool
		server, driver string
		n              int
		wantS, wantD   []int
		wantErr        string
	}{
		{"two CPUs", true, "", "", 2, []int{0}, []int{1}, ""},
		{"four CPUs", true, "", "", 4, []int{0, 1}, []int{2, 3}, ""},
		{"one CPU: no pinning", true, "", "", 1, nil, nil, ""},
		{"off", false, "", "", 2, nil, nil, ""},
		{"given", true, "1", "0", 2, []int{1}, []int{0}, ""},
		{"ranges", true, "0-2", "3", 4, []int{0, 1, 2}, []int{3}, ""},
		{"overlap", true, "0-1", "1", 2, nil, nil, "share CPU 1"},
		{"nothing left", true, "0-1", "", 2, nil, nil, "leaves the driver no CPU"},
		{"out of range", true, "2", "", 2, nil, nil, `-server-cpus: "2" is not a CPU`},
		{"sets without pinning", false, "0", "1", 2, nil, nil, "go with -pin"},
		{"sets on one CPU", true, "0", "", 1, nil, nil, "this machine has 1 CPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, d, err := cpuSets(tt.pin, tt.server, tt.driver, tt.n)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantS, s)
			assert.Equal(t, tt.wantD, d)
		})
	}
	assert.Equal(t, []string{"taskset", "-c", "0,2", "bin/locklab"}, pinned([]int{0, 2}, []string{"bin/locklab"}))
	assert.Equal(t, []string{"bin/locklab"}, pinned(nil, []string{"bin/locklab"}))
	assert.Equal(t, []string{"GOMAXPROCS=2"}, gomaxprocsEnv([]int{0, 1}))
	assert.Empty(t, gomaxprocsEnv(nil))
}

func TestPlanInterleavesModesAndDrivers(t *testing.T) {
	cfg, err := parseFlags([]string{"-workloads", "counter,bank-A", "-vus", "10,100", "-h2load-vus", "10", "-reps", "2"}, io.Discard)
	require.NoError(t, err)
	specs := plan(cfg)
	// go: 2 workloads × 2 levels × 3 modes; h2load: the counter only, 1 level × 3 modes; twice.
	require.Len(t, specs, 2*(2*2*3+1*3))
	var order []string
	for _, s := range specs[:6] {
		order = append(order, s.Mode)
	}
	assert.Equal(t, []string{"mutex", "inputQ", "noop", "mutex", "inputQ", "noop"}, order)
	assert.Equal(t, "001-counter-go-mutex-vus10-rep1", specs[0].ID)
	assert.Equal(t, "h2load", specs[6].Driver, "drivers interleave within a repetition")
	second := specs[len(specs)/2]
	assert.Equal(t, 2, second.Rep)
	assert.Equal(t, "noop", second.Mode, "the second repetition runs the modes in the opposite order")
	ids := map[string]bool{}
	for _, s := range specs {
		assert.False(t, ids[s.ID], "duplicate id %s", s.ID)
		ids[s.ID] = true
		assert.NotEqual(t, "bank-A", map[bool]string{true: s.Workload}[s.Driver == "h2load"], "h2load drives the counter only")
	}
}

func TestPlanFactors(t *testing.T) {
	cfg, err := parseFlags([]string{"-driver", "go", "-workloads", "counter,bank-A", "-modes", "mutex", "-vus", "10", "-reps", "1",
		"-work", "0,10us", "-skew", "0,0.99"}, io.Discard)
	require.NoError(t, err)
	specs := plan(cfg)
	// the counter ignores skew: 2 work values; the bank: 2 × 2.
	require.Len(t, specs, 2+4)
	assert.Equal(t, "002-counter-go-mutex-vus10-w10us-rep1", specs[1].ID)
	assert.Equal(t, "006-bank-A-go-mutex-vus10-w10us-skew0.99-rep1", specs[5].ID)
	keys := map[string]bool{}
	for _, s := range specs {
		keys[groupKey(Section{s.Workload, s.Driver, s.Factors}, s.Level, s.Mode)] = true
	}
	assert.Len(t, keys, 6, "every factor is part of the group key")
	assert.Equal(t, "work=10µs durability=none skew=0.99 read-ratio=default", specs[5].Factors.Key())
	assert.Equal(t, "work 10µs, durability none, skew 0.99, read ratio default", specs[5].Factors.String())
}

func TestPlanSkipsNotApplicable(t *testing.T) {
	cfg, err := parseFlags([]string{"-driver", "go", "-workloads", "counter", "-modes", "mutex,noop", "-vus", "10", "-reps", "1",
		"-durability", "none,wal"}, io.Discard)
	require.NoError(t, err)
	na := naCells(cfg)
	require.Equal(t, []NA{{Workload: "counter", Mode: "noop", Durability: "wal", Reason: "noop cannot run with a write-ahead log"}}, na)
	var ids []string
	for _, s := range plan(cfg) {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"001-counter-go-mutex-vus10-rep1", "002-counter-go-noop-vus10-rep1", "003-counter-go-mutex-vus10-wal-rep1"}, ids)
}

func TestDriverCommands(t *testing.T) {
	cfg, err := parseFlags([]string{"-model", "open", "-rates", "300", "-max-vus", "50", "-driver", "go,k6", "-skew", "0.5"}, io.Discard)
	require.NoError(t, err)
	spec := plan(cfg)[0]
	spec.Scenario = "B"
	spec.wl = workloads["bank-B"]
	spec.Factors.Skew = 0.5
	env := k6Env(cfg, spec, "127.0.0.1:1234", 3*time.Second, "/tmp/s.json")
	assert.ElementsMatch(t, []string{
		"ADDR=127.0.0.1:1234", "MODEL=open", "DURATION=3s", "RESET=0",
		"RATE=300", "MAX_VUS=50", "SCENARIO=B", "SKEW=0.5", "SUMMARY_JSON=/tmp/s.json",
	}, env)
	argv, _, err := k6Command(cfg, driverJob{spec: spec, addr: "a:1", duration: time.Second})
	require.NoError(t, err)
	assert.Contains(t, argv, "--no-usage-report")

	argv, _, err = goCommand(cfg, driverJob{spec: spec, addr: "a:1", duration: 3 * time.Second, summary: "/tmp/s.json"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bin/load", "-addr", "a:1", "-workload", "bank", "-model", "open", "-duration", "3s", "-warmup", "0",
		"-out", "/tmp/s.json", "-conns", strconv.Itoa(defaultConns), "-skew", "0.5", "-read-ratio", "-1", "-scenario", "B", "-rate", "300", "-callers", "50"}, argv)
}

func TestServerArgs(t *testing.T) {
	spec := RunSpec{Mode: "inputQ-batch", Factors: Factors{Work: 10 * time.Microsecond, Durability: durabilityWAL}}
	assert.Equal(t, []string{"-mode", "inputQ-batch", "-addr", "127.0.0.1:0", "-work", "10µs", "-durability", "wal", "-data-dir", "/d",
		"-metrics-addr", "127.0.0.1:9"}, serverArgs(spec, "/d", "127.0.0.1:9"))
	assert.Equal(t, []string{"-mode", "mutex", "-addr", "127.0.0.1:0"}, serverArgs(RunSpec{Mode: "mutex", Factors: defaultFactors}, "/d", ""))
}
