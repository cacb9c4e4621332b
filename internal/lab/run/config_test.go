package run

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/paired"
	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/internal/lab/report"
)

// The runner starts a goroutine per process; none may outlive a test.
// The test binary started with echoChild set is BenchmarkProcessSwitch's
// other process instead.
func TestMain(m *testing.M) {
	if os.Getenv(echoChild) != "" {
		echo()
		return
	}
	goleak.VerifyTestMain(m)
}

// defaultOptions are the flags' defaults (cmd/compare declares the same).
func defaultOptions() Options {
	return Options{
		Workloads: DefaultWorkloads, Modes: DefaultModes, Drivers: DefaultDrivers, Model: "closed",
		VUs: DefaultLevels, H2loadVUs: DefaultH2Levels, MaxVUs: DefaultMaxVUs, Conns: DefaultConns, Reps: DefaultReps,
		Duration: DefaultDuration, Warmup: DefaultWarmup, Pin: true, Baseline: DefaultBaseline, Seed: 1,
		K6: "bin/k6", Load: "bin/load", H2load: "h2load", Server: "bin/locklab", Scripts: "k6",
		// The A/A control is off here, so that the plan tests see the
		// modes given; the gate's tests turn it on.
		MaxForeign: DefaultMaxForeign, Margin: DefaultMargin, Reruns: DefaultReruns,
	}
}

// testConfig is the defaults, changed by edit, on a 2-CPU machine.
func testConfig(t *testing.T, edit func(o *Options)) Config {
	t.Helper()
	o := defaultOptions()
	if edit != nil {
		edit(&o)
	}
	cfg, err := NewConfig(o, 2)
	require.NoError(t, err)
	return cfg
}

// testCatalog is what today's server says: atomic keeps only the counter,
// and neither atomic nor noop can keep a write-ahead log.
func testCatalog() plan.Catalog {
	all := plan.ParseModeList("mutex counter bank kv\natomic counter\ninputQ counter bank kv\nnoop counter bank kv\n")
	wal := plan.ParseModeList("mutex counter bank kv\ninputQ counter bank kv\n")
	return plan.Catalog{Base: all, Under: map[string]plan.ModeList{plan.CatalogKey("durability", "wal"): wal, plan.CatalogKey("durability", "none"): all}}
}

func layout(cfg Config) []plan.Spec { return plan.Layout(cfg.Config, testCatalog(), Serves) }

func TestNewConfigDefaults(t *testing.T) {
	cfg := testConfig(t, nil)
	assert.Equal(t, []string{"mutex", "inputQ", "noop"}, cfg.Modes)
	assert.Equal(t, []string{"go", "h2load"}, cfg.Drivers)
	assert.Equal(t, []int{10, 100}, cfg.Levels)
	assert.Equal(t, []int{100}, cfg.H2loadLevels)
	assert.Equal(t, "closed", cfg.Model)
	assert.Equal(t, "mutex", cfg.Baseline)
	assert.GreaterOrEqual(t, cfg.Reps, 8, "a paired test needs blocks to have power")
	require.Len(t, cfg.Workloads, 2)
	assert.Equal(t, "counter", cfg.Workloads[0].Name)
	assert.Equal(t, plan.Workload{Name: "bank-A", Kind: "bank", Script: "bank.js", Scenario: "A"}, cfg.Workloads[1])
	assert.Equal(t, []plan.Point{plan.DefaultPoint()}, cfg.Factors.Points())
	assert.Equal(t, []int{0}, cfg.ServerCPUs)
	assert.Equal(t, []int{1}, cfg.DriverCPUs)
}

// TestDefaultPlanFitsTheBudget: make compare must finish within 8 minutes
// on a 2-CPU machine; the plan's runs at their configured length, plus what
// a run costs to start, connect and stop, must leave room to build.
func TestDefaultPlanFitsTheBudget(t *testing.T) {
	cfg := testConfig(t, func(o *Options) { o.AA = true }) // as the flag's default
	specs := layout(cfg)
	arms := len(cfg.Modes) + 1                                                       // the A/A control's twin
	perBlock := len(cfg.Workloads)*len(cfg.Levels)*arms + len(cfg.H2loadLevels)*arms // h2load: the counter only
	assert.Len(t, specs, perBlock*cfg.Reps)
	assert.Less(t, PlanDuration(cfg, specs), 7*time.Minute+30*time.Second)
	assert.Empty(t, PowerWarning(cfg, specs), "the default blocks are enough for the default report's tests")
}

// TestPlanDurationCountsEachDriversConnections: a k6 VU opens a connection
// of its own, so a k6 run of 1000 VUs takes longer to connect than a Go
// driver's run of 1000 callers sharing -conns. The control: with -conns 0
// the Go driver opens one per caller too, and the two estimates agree.
func TestPlanDurationCountsEachDriversConnections(t *testing.T) {
	cfg := testConfig(t, nil)
	require.Positive(t, cfg.Conns)
	run := func(driver string) []plan.Spec {
		return []plan.Spec{{Workload: "counter", Driver: driver, Factors: plan.DefaultPoint(), Mode: "mutex", Model: "closed", Level: 1000, Rep: 1}}
	}
	require.Less(t, cfg.Warmup, time.Second)
	k6Warmup := time.Second - cfg.Warmup // k6 warms up for a second at least (TestWarmupFor)
	assert.Equal(t, time.Duration(2*(1000-cfg.Conns))*1500*time.Microsecond+k6Warmup, PlanDuration(cfg, run("k6"))-PlanDuration(cfg, run("go")))
	cfg.Conns = 0
	assert.Equal(t, PlanDuration(cfg, run("go"))+k6Warmup, PlanDuration(cfg, run("k6")))
}

// TestPowerWarning: a plan whose blocks are too few for the report to
// judge any primary is warned about before it runs; one with enough blocks
// is not (the control).
func TestPowerWarning(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Reps = paired.MinBlocksRobust - 1
	w := PowerWarning(cfg, layout(cfg))
	assert.Contains(t, w, fmt.Sprintf("-reps %d: the report will judge %d primary comparisons", cfg.Reps, report.Family(layout(cfg), cfg.Baseline)))
	assert.Contains(t, w, fmt.Sprintf("at least %d clean blocks", paired.MinBlocksRobust))
	cfg.Reps = paired.MinBlocksRobust
	assert.Empty(t, PowerWarning(cfg, layout(cfg)))
	cfg = testConfig(t, func(o *Options) { o.Modes, o.Baseline, o.Reps = "mutex", "mutex", 1 })
	assert.Empty(t, PowerWarning(cfg, layout(cfg)), "one design compares nothing: nothing to warn of")
}

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(o *Options)
		wantErr string
		check   func(t *testing.T, cfg Config)
	}{
		{name: "ladder", edit: func(o *Options) { o.Drivers, o.Ladder = "k6", true }, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{10, 100, 200, 300, 500, 1000}, cfg.Levels)
			assert.Equal(t, []string{"k6"}, cfg.Drivers)
		}},
		{name: "bank means bank-A", edit: func(o *Options) { o.Workloads = "bank,kv" }, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, "bank-A", cfg.Workloads[0].Name)
			assert.Equal(t, "kv", cfg.Workloads[1].Name)
		}},
		{name: "open model", edit: func(o *Options) { o.Drivers, o.Model, o.Rates = "go", "open", "500,1000" }, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []int{500, 1000}, cfg.Levels)
		}},
		{name: "all modes", edit: func(o *Options) { o.Modes = "all" }, check: func(t *testing.T, cfg Config) {
			assert.True(t, cfg.AllModes, "the server binary names them")
		}},
		{name: "factors", edit: func(o *Options) {
			o.Factors = map[string]string{"work": "0,10us", "durability": "none,wal", "skew": "0,0.99", "read-ratio": "default,0.9"}
		}, check: func(t *testing.T, cfg Config) {
			assert.Equal(t, []string{"0s", "10µs"}, cfg.Factors.Values("work"))
			assert.Equal(t, []string{"none", "wal"}, cfg.Factors.Values("durability"))
			assert.Equal(t, []string{"0", "0.99"}, cfg.Factors.Values("skew"))
			assert.Equal(t, []string{"default", "0.9"}, cfg.Factors.Values("read-ratio"))
			assert.Len(t, cfg.Factors.Points(), 16)
		}},
		{name: "no pinning", edit: func(o *Options) { o.Pin = false }, check: func(t *testing.T, cfg Config) {
			assert.Nil(t, cfg.ServerCPUs)
			assert.Nil(t, cfg.DriverCPUs)
		}},
		{name: "unknown workload", edit: func(o *Options) { o.Workloads = "counter,nosuch" }, wantErr: `unknown workload "nosuch"; workloads: bank-A, bank-B, bank-C, counter, kv`},
		{name: "unknown driver", edit: func(o *Options) { o.Drivers = "go,wrk" }, wantErr: `-driver: unknown driver "wrk"; drivers: go, k6, h2load`},
		{name: "empty item", edit: func(o *Options) { o.Modes = "mutex,,inputQ" }, wantErr: "empty item"},
		{name: "duplicate", edit: func(o *Options) { o.Modes = "mutex,mutex" }, wantErr: `"mutex" given twice`},
		{name: "vus not a number", edit: func(o *Options) { o.VUs = "10,x" }, wantErr: `-vus: "x" is not a whole number in 1..5000`},
		{name: "vus zero", edit: func(o *Options) { o.VUs = "0" }, wantErr: "not a whole number in 1..5000"},
		{name: "bad model", edit: func(o *Options) { o.Model = "half-open" }, wantErr: `-model "half-open": want closed or open`},
		{name: "open without rates", edit: func(o *Options) { o.Model = "open" }, wantErr: "-model open needs -rates"},
		{name: "open with h2load", edit: func(o *Options) { o.Model, o.Rates = "open", "100" }, wantErr: "-driver h2load runs the closed model only"},
		{name: "rates with closed", edit: func(o *Options) { o.Rates = "100" }, wantErr: "-rates goes with -model open"},
		{name: "short duration", edit: func(o *Options) { o.Duration = 500 * time.Millisecond }, wantErr: "want at least 1s"},
		{name: "negative warmup", edit: func(o *Options) { o.Warmup = -time.Second }, wantErr: "want 0 or more"},
		{name: "h2load without warm-up", edit: func(o *Options) { o.Warmup = 0 }, wantErr: "-driver h2load needs a warm-up"},
		{name: "zero reps", edit: func(o *Options) { o.Reps = 0 }, wantErr: "-reps 0: want 1..100"},
		{name: "baseline not run", edit: func(o *Options) { o.Baseline = "rwmutex" }, wantErr: "-baseline rwmutex is not among -modes (mutex,inputQ,noop): the baseline must run"},
		{name: "baseline noop", edit: func(o *Options) { o.Baseline = "noop" }, wantErr: "-baseline noop: noop keeps no state"},
		{name: "baseline empty", edit: func(o *Options) { o.Baseline = "" }, wantErr: "-baseline is empty"},
		{name: "bad work", edit: func(o *Options) { o.Factors = map[string]string{"work": "0,fast"} }, wantErr: `-work: "fast" is not a duration`},
		{name: "bad durability", edit: func(o *Options) { o.Factors = map[string]string{"durability": "none,fsync"} }, wantErr: `-durability: "fsync": want none or wal`},
		{name: "bad skew", edit: func(o *Options) { o.Factors = map[string]string{"skew": "-1"} }, wantErr: `-skew: "-1" is not a number in 0..1`},
		{name: "skew one", edit: func(o *Options) { o.Factors = map[string]string{"skew": "0,1"} }, wantErr: "want 0 ≤ θ < 1"},
		{name: "gate defaults", edit: func(o *Options) { o.AA = true }, check: func(t *testing.T, cfg Config) {
			assert.InDelta(t, 0.10, cfg.Gate.MaxForeign, 1e-12)
			assert.InDelta(t, 0.03, cfg.Gate.Margin, 1e-12)
			assert.Zero(t, cfg.Gate.Precision)
			assert.Zero(t, cfg.Gate.MaxBlocks, "no second stage without -precision")
			assert.Equal(t, "mutex", cfg.Gate.Twin, "the A/A control runs the baseline twice")
			assert.Equal(t, "mutex", cfg.Twin)
		}},
		{name: "gate as given", edit: func(o *Options) { o.MaxForeign, o.Margin, o.Precision, o.AA = 0.05, "2.5%", "4%", false }, check: func(t *testing.T, cfg Config) {
			assert.InDelta(t, 0.05, cfg.Gate.MaxForeign, 1e-12)
			assert.InDelta(t, 0.025, cfg.Gate.Margin, 1e-12)
			assert.InDelta(t, 0.04, cfg.Gate.Precision, 1e-12)
			assert.Equal(t, 3*cfg.Reps, cfg.Gate.MaxBlocks)
			assert.Empty(t, cfg.Twin)
		}},
		{name: "max-foreign over 1", edit: func(o *Options) { o.MaxForeign = 1.5 }, wantErr: "-max-foreign 1.5: want a share above 0 and at most 1"},
		{name: "max-foreign negative", edit: func(o *Options) { o.MaxForeign = -0.1 }, wantErr: "-max-foreign -0.1: want a share above 0"},
		{name: "margin negative", edit: func(o *Options) { o.Margin = "-3%" }, wantErr: `-margin "-3%": want 0% to 50%`},
		{name: "margin zero", edit: func(o *Options) { o.Margin = "0%" }, wantErr: "-margin 0%: no interval can lie within ±0%"},
		{name: "precision NaN", edit: func(o *Options) { o.Precision = "NaN" }, wantErr: `-precision "NaN": want a percentage`},
		{name: "precision too wide", edit: func(o *Options) { o.Precision = "80" }, wantErr: `-precision "80": want 0% to 50%`},
		{name: "reruns negative", edit: func(o *Options) { o.Reruns = -1 }, wantErr: "-reruns -1: want 0..10"},
		{name: "max-blocks below reps", edit: func(o *Options) { o.Precision, o.MaxBlocks = "3%", 4 }, wantErr: "-max-blocks 4: want 10 (-reps) to 100"},
		{name: "bad read ratio", edit: func(o *Options) { o.Factors = map[string]string{"read-ratio": "1.5"} }, wantErr: `-read-ratio: "1.5" is not a number in 0..1 or default`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			tt.edit(&o)
			cfg, err := NewConfig(o, 2)
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

// TestServerCPUs: -server-cpus is a factor whose every value is placed, and
// checked against the machine, before anything runs; -share-cpus decides
// whether a server that leaves the driver no CPU of its own may run.
func TestServerCPUs(t *testing.T) {
	type want struct {
		server, driver []int
		shared         bool
	}
	tests := []struct {
		name    string
		cpus    string // -server-cpus
		driver  string // -driver-cpus
		share   bool
		pin     bool
		n       int // the machine's CPUs
		want    map[string]want
		wantErr string
	}{
		{name: "default on 2", cpus: "half", pin: true, n: 2, want: map[string]want{"half": {[]int{0}, []int{1}, false}}},
		{name: "default on 8", cpus: "half", pin: true, n: 8, want: map[string]want{"half": {[]int{0, 1, 2, 3}, []int{4, 5, 6, 7}, false}}},
		{name: "default on 1: unpinned", cpus: "half", pin: true, n: 1, want: map[string]want{"half": {nil, nil, false}}},
		{name: "off", cpus: "half", n: 2, want: map[string]want{"half": {nil, nil, false}}},
		{name: "1,2 shared", cpus: "1,2", share: true, pin: true, n: 2, want: map[string]want{
			"1": {[]int{0}, []int{1}, false}, "2": {[]int{0, 1}, []int{0, 1}, true}}},
		{name: "1,2 without -share-cpus", cpus: "1,2", pin: true, n: 2, wantErr: "-server-cpus 2 leaves the driver no CPU of its own on this 2-CPU machine: add -share-cpus"},
		{name: "counts on 64", cpus: "1,2,4,8,16,32", pin: true, n: 64, want: map[string]want{
			"4": {seq(0, 3), seq(4, 63), false}, "32": {seq(0, 31), seq(32, 63), false}}},
		{name: "sets", cpus: "0+2,2-3,0-1", pin: true, n: 4, want: map[string]want{
			"0-0+2-2": {[]int{0, 2}, []int{1, 3}, false}, "2-3": {[]int{2, 3}, []int{0, 1}, false}, "2": {[]int{0, 1}, []int{2, 3}, false}}},
		{name: "driver given, kept", cpus: "1,2", driver: "3", pin: true, n: 4, want: map[string]want{
			"1": {[]int{0}, []int{3}, false}, "2": {[]int{0, 1}, []int{3}, false}}},
		{name: "driver given, overlapping", cpus: "2", driver: "1", pin: true, n: 4, wantErr: "-server-cpus 2 and -driver-cpus 1 share CPU 1: the sets must be disjoint, or add -share-cpus"},
		{name: "driver given, overlapping, shared", cpus: "2", driver: "1-2", share: true, pin: true, n: 4, want: map[string]want{
			"2": {[]int{0, 1}, []int{1, 2}, true}}},
		{name: "a CPU beyond the machine", cpus: "1,3", share: true, pin: true, n: 2, wantErr: "-server-cpus 3 needs CPU 2; this machine has 2 CPUs (0..1)"},
		{name: "a set beyond the machine", cpus: "1-2", pin: true, n: 2, wantErr: "-server-cpus 1-2 needs CPU 2"},
		{name: "beyond this machine", cpus: strconv.Itoa(runtime.NumCPU() + 1), share: true, pin: true, n: runtime.NumCPU(),
			wantErr: "needs CPU " + strconv.Itoa(runtime.NumCPU())},
		{name: "one CPU, shared", cpus: "1", share: true, pin: true, n: 1, want: map[string]want{"1": {[]int{0}, []int{0}, true}}},
		{name: "one CPU, not shared", cpus: "1", pin: true, n: 1, wantErr: "leaves the driver no CPU of its own on this 1-CPU machine"},
		{name: "sets without pinning", cpus: "1", n: 2, wantErr: "-server-cpus goes with -pin"},
		{name: "share without pinning", share: true, cpus: "half", n: 2, wantErr: "-share-cpus goes with -pin"},
		{name: "driver without pinning", driver: "1", cpus: "half", n: 2, wantErr: "-driver-cpus goes with -pin"},
		{name: "bad driver set", driver: "1-x", cpus: "half", pin: true, n: 2, wantErr: `-driver-cpus: "1-x" is not a CPU`},
		{name: "not a count", cpus: "0", pin: true, n: 2, wantErr: `-server-cpus: "0" is not a CPU count`},
		{name: "a comma in a set", cpus: "0-1,2+", pin: true, n: 4, wantErr: `-server-cpus: "2+" is not a CPU count`},
		{name: "a sign", cpus: "+1-2", pin: true, n: 4, wantErr: `-server-cpus: "+1-2" is not a CPU count`},
		{name: "backwards range", cpus: "3-1", pin: true, n: 4, wantErr: `-server-cpus: "3-1" is not a CPU count`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			o.Pin, o.ShareCPUs, o.DriverCPUs = tt.pin, tt.share, tt.driver
			o.Factors = map[string]string{plan.ServerCPUs: tt.cpus}
			cfg, err := NewConfig(o, tt.n)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			for v, w := range tt.want {
				require.Contains(t, cfg.Factors.Values(plan.ServerCPUs), v)
				p, err := cfg.placement(plan.DefaultPoint().With(plan.ServerCPUs, v))
				require.NoError(t, err)
				assert.Equal(t, w.server, p.Server, v)
				assert.Equal(t, w.driver, p.Driver, v)
				assert.Equal(t, w.shared, p.Shared, v)
				wantProcs := len(w.server)
				if wantProcs == 0 {
					wantProcs = tt.n // unpinned: the machine's
				}
				assert.Equal(t, wantProcs, cfg.gomaxprocs(p.Server), "GOMAXPROCS matches")
			}
		})
	}
	assert.Equal(t, []string{"taskset", "-c", "0,2", "bin/locklab"}, pinned([]int{0, 2}, []string{"bin/locklab"}))
	assert.Equal(t, []string{"bin/locklab"}, pinned(nil, []string{"bin/locklab"}))
	assert.Equal(t, []string{"GOMAXPROCS=2"}, gomaxprocsEnv(Config{}.gomaxprocs([]int{0, 1})))
	assert.Equal(t, []string{"GOMAXPROCS=6"}, gomaxprocsEnv(Config{NumCPU: 6}.gomaxprocs(nil)), "unpinned: the machine's CPUs, said explicitly")
	if runtime.NumCPU() >= 2 {
		cfg, err := NewConfig(defaultOptions(), runtime.NumCPU())
		require.NoError(t, err)
		assert.NotEmpty(t, cfg.ServerCPUs)
	}
}

// seq is the CPUs a..b.
func seq(a, b int) []int {
	var out []int
	for c := a; c <= b; c++ {
		out = append(out, c)
	}
	return out
}

func TestPlanInterleavesModesAndDrivers(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.VUs, o.H2loadVUs, o.Reps, o.Seed = "counter,bank-A", "10,100", "10", 4, 42
	})
	specs := layout(cfg)
	// go: 2 workloads × 2 levels × 3 modes; h2load: the counter only, 1 level × 3 modes; per block.
	perBlock := 2*2*3 + 1*3
	require.Len(t, specs, cfg.Reps*perBlock)
	assert.Equal(t, "h2load", specs[6].Driver, "drivers interleave within a block")
	for b := range cfg.Reps {
		block := specs[b*perBlock : (b+1)*perBlock]
		want := paired.Order(cfg.Seed, b+1, cfg.Modes)
		for i := 0; i < len(block); i += len(cfg.Modes) {
			var got []string
			for _, s := range block[i : i+len(cfg.Modes)] {
				assert.Equal(t, b+1, s.Rep, "a block is one repetition")
				got = append(got, s.Mode)
			}
			assert.Equal(t, want, got, "block %d runs its modes in its own seeded order at every level", b+1)
		}
	}
	assert.Equal(t, fmt.Sprintf("001-counter-go-%s-vus10-rep1", paired.Order(cfg.Seed, 1, cfg.Modes)[0]), specs[0].ID)
	ids := map[string]bool{}
	for _, s := range specs {
		assert.False(t, ids[s.ID], "duplicate id %s", s.ID)
		ids[s.ID] = true
		if s.Driver == "h2load" {
			assert.Equal(t, "counter", s.Workload, "h2load drives the counter only")
		}
	}
}

// TestPlanSeedReproduces: the same seed lays out the same plan, and meta.json
// records it; other seeds give other orders (the control: the order is
// drawn, not fixed).
func TestPlanSeedReproduces(t *testing.T) {
	edit := func(seed int) func(o *Options) {
		return func(o *Options) { o.Seed, o.Reps = seed, 6 }
	}
	cfg := testConfig(t, edit(7))
	assert.Equal(t, layout(cfg), layout(testConfig(t, edit(7))))
	meta := newMeta(cfg, nil)
	require.NotNil(t, meta.Seed)
	assert.Equal(t, layout(cfg), layout(testConfig(t, edit(*meta.Seed))), "the recorded seed reproduces the plan")
	differ := 0
	for seed := range 10 {
		if !assert.ObjectsAreEqual(layout(cfg), layout(testConfig(t, edit(100+seed)))) {
			differ++
		}
	}
	assert.Positive(t, differ)
}

func TestPlanFactors(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Drivers, o.Workloads, o.Modes, o.VUs, o.Reps = "go", "counter,bank-A", "mutex", "10", 1
		o.Factors = map[string]string{"work": "0,10us", "skew": "0,0.99"}
	})
	specs := layout(cfg)
	// the counter ignores skew: 2 work values; the bank: 2 × 2.
	require.Len(t, specs, 2+4)
	assert.Equal(t, "002-counter-go-mutex-vus10-w10us-rep1", specs[1].ID)
	assert.Equal(t, "006-bank-A-go-mutex-vus10-w10us-skew0.99-rep1", specs[5].ID)
	keys := map[plan.Point]bool{}
	for _, s := range specs {
		keys[s.Factors] = true
	}
	assert.Len(t, keys, 4, "counter: 2 points; bank: 4, of which the counter's two are the bank's unskewed ones")
	assert.Equal(t, "work=10µs durability=none skew=0.99 read-ratio=default server-cpus=half attribute=off", specs[5].Factors.Key())
	assert.Equal(t, "work 10µs, durability none, skew 0.99, read ratio default, server CPUs half, attribution off", specs[5].Factors.String())
}

func TestPlanSkipsNotApplicable(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Drivers, o.Workloads, o.Modes, o.VUs, o.Reps = "go", "counter,bank-A", "mutex,atomic,noop", "10", 1
		o.Factors = map[string]string{"durability": "none,wal"}
	})
	na := plan.NACells(cfg.Config, testCatalog())
	require.Equal(t, []plan.NA{
		{Workload: "counter", Mode: "atomic", Factor: "durability", Value: "wal", Reason: "atomic cannot run with a write-ahead log"},
		{Workload: "counter", Mode: "noop", Factor: "durability", Value: "wal", Reason: "noop cannot run with a write-ahead log"},
		{Workload: "bank-A", Mode: "atomic", Reason: "atomic does not serve the bank workload"},
		{Workload: "bank-A", Mode: "noop", Factor: "durability", Value: "wal", Reason: "noop cannot run with a write-ahead log"},
	}, na)
	var ids []string
	for _, s := range layout(cfg) {
		ids = append(ids, s.ID[len("001-"):]) // the index follows the block's drawn order
	}
	assert.ElementsMatch(t, []string{
		"counter-go-mutex-vus10-rep1", "counter-go-atomic-vus10-rep1", "counter-go-noop-vus10-rep1", "counter-go-mutex-vus10-wal-rep1",
		"bank-A-go-mutex-vus10-rep1", "bank-A-go-noop-vus10-rep1", "bank-A-go-mutex-vus10-wal-rep1",
	}, ids)
}

func TestDriverCommands(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Model, o.Rates, o.MaxVUs, o.Drivers = "open", "300", 50, "go,k6"
		o.Factors = map[string]string{"skew": "0.5"}
	})
	spec := layout(cfg)[0]
	spec.Workload, spec.Scenario = "bank-B", "B"
	spec.Factors = spec.Factors.With("skew", "0.5")
	env := k6Env(cfg, Job{Spec: spec, Addr: "127.0.0.1:1234", Duration: 3 * time.Second, Summary: "/tmp/s.json"})
	assert.ElementsMatch(t, []string{
		"ADDR=127.0.0.1:1234", "MODEL=open", "DURATION=3s", "RESET=0",
		"RATE=300", "MAX_VUS=50", "SCENARIO=B", "SKEW=0.5", "SUMMARY_JSON=/tmp/s.json",
	}, env)
	argv, _, err := k6Driver{}.Command(cfg, Job{Spec: spec, Addr: "a:1", Duration: time.Second})
	require.NoError(t, err)
	assert.Contains(t, argv, "--no-usage-report")
	assert.Equal(t, "k6/bank.js", argv[len(argv)-1])

	argv, _, err = goDriver{}.Command(cfg, Job{Spec: spec, Addr: "a:1", Duration: 3 * time.Second, Summary: "/tmp/s.json"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bin/load", "-addr", "a:1", "-workload", "bank", "-model", "open", "-duration", "3s", "-warmup", "0",
		"-out", "/tmp/s.json", "-conns", strconv.Itoa(DefaultConns), "-skew", "0.5", "-read-ratio", "-1", "-scenario", "B", "-rate", "300", "-callers", "50"}, argv)
}

func TestServerArgs(t *testing.T) {
	spec := plan.Spec{Mode: "inputQ-batch", Factors: plan.DefaultPoint().With("work", "10µs").With("durability", "wal")}
	assert.Equal(t, []string{"-mode", "inputQ-batch", "-addr", "127.0.0.1:0", "-work", "10µs", "-durability", "wal", "-data-dir", "/d",
		"-metrics-addr", "127.0.0.1:9"}, serverArgs(spec, "/d", "127.0.0.1:9"))
	assert.Equal(t, []string{"-mode", "mutex", "-addr", "127.0.0.1:0"}, serverArgs(plan.Spec{Mode: "mutex"}, "/d", ""))
}
