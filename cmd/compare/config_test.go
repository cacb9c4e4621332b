package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsDefaults(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"mutex", "inputQ", "noop"}, cfg.Modes)
	assert.Equal(t, []int{10, 100, 1000}, cfg.Levels)
	assert.Equal(t, "closed", cfg.Model)
	assert.Equal(t, 10*time.Second, cfg.Duration)
	assert.Equal(t, 2, cfg.Reps)
	require.Len(t, cfg.Workloads, 2)
	assert.Equal(t, "counter", cfg.Workloads[0].Name)
	assert.Equal(t, Workload{Name: "bank-A", Script: "bank.js", Scenario: "A"}, cfg.Workloads[1])
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, cfg Config)
	}{
		{name: "ladder", args: []string{"-ladder"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{10, 100, 200, 300, 500, 1000}, cfg.Levels)
		}},
		{name: "bank means bank-A", args: []string{"-workloads", "bank,kv"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, "bank-A", cfg.Workloads[0].Name)
			assert.Equal(t, "kv", cfg.Workloads[1].Name)
		}},
		{name: "open model", args: []string{"-model", "open", "-rates", "500,1000"}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{500, 1000}, cfg.Levels)
		}},
		{name: "unknown workload", args: []string{"-workloads", "counter,nosuch"}, wantErr: `unknown workload "nosuch"; workloads: bank-A, bank-B, bank-C, counter, kv`},
		{name: "empty item", args: []string{"-modes", "mutex,,inputQ"}, wantErr: "empty item"},
		{name: "duplicate", args: []string{"-modes", "mutex,mutex"}, wantErr: `"mutex" given twice`},
		{name: "vus not a number", args: []string{"-vus", "10,x"}, wantErr: `-vus: "x" is not a whole number in 1..5000`},
		{name: "vus zero", args: []string{"-vus", "0"}, wantErr: "not a whole number in 1..5000"},
		{name: "bad model", args: []string{"-model", "half-open"}, wantErr: `-model "half-open": want closed or open`},
		{name: "open without rates", args: []string{"-model", "open"}, wantErr: "-model open needs -rates"},
		{name: "rates with closed", args: []string{"-rates", "100"}, wantErr: "-rates goes with -model open"},
		{name: "short duration", args: []string{"-duration", "500ms"}, wantErr: "want at least 1s"},
		{name: "negative warmup", args: []string{"-warmup", "-1s"}, wantErr: "want 0 or more"},
		{name: "zero reps", args: []string{"-reps", "0"}, wantErr: "-reps 0: want 1..100"},
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

func TestPlanInterleavesModes(t *testing.T) {
	cfg, err := parseFlags([]string{"-workloads", "counter", "-vus", "10,100", "-reps", "2"}, io.Discard)
	require.NoError(t, err)
	specs := plan(cfg)
	require.Len(t, specs, 1*2*3*2)
	var order []string
	for _, s := range specs {
		order = append(order, s.Mode)
	}
	// Modes alternate run by run within a level, and the second repetition
	// runs them in the opposite order.
	assert.Equal(t, []string{
		"mutex", "inputQ", "noop", "mutex", "inputQ", "noop",
		"noop", "inputQ", "mutex", "noop", "inputQ", "mutex",
	}, order)
	assert.Equal(t, "001-counter-mutex-vus10-rep1", specs[0].ID)
	assert.Equal(t, 12, specs[11].Index)
	ids := map[string]bool{}
	for _, s := range specs {
		assert.False(t, ids[s.ID], "duplicate id %s", s.ID)
		ids[s.ID] = true
	}
}

func TestK6Env(t *testing.T) {
	cfg, err := parseFlags([]string{"-model", "open", "-rates", "300", "-max-vus", "50"}, io.Discard)
	require.NoError(t, err)
	spec := plan(cfg)[0]
	spec.Scenario = "B"
	env := k6Env(cfg, spec, "127.0.0.1:1234", 3*time.Second, "/tmp/s.json")
	assert.ElementsMatch(t, []string{
		"ADDR=127.0.0.1:1234", "MODEL=open", "DURATION=3s", "RESET=0",
		"RATE=300", "MAX_VUS=50", "SCENARIO=B", "SUMMARY_JSON=/tmp/s.json",
	}, env)
}
