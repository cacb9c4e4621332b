package run

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
)

// profiledProcs is fakeProcs whose server, given -metrics-addr, serves a
// CPU profile there: three samples in the store for every one in the
// scheduler. Its pid is the test's own, whose /proc/PID/io is readable.
type profiledProcs struct {
	*fakeProcs
	srv *http.Server

	mu    sync.Mutex // protects asked: the handler's goroutine appends
	asked []string   // the profile requests, as received
}

type profiledServer struct {
	server
	p *profiledProcs
}

func (s profiledServer) pid() int { return os.Getpid() }
func (s profiledServer) stop() (int, time.Duration) {
	if s.p.srv != nil {
		s.p.srv.Close()
	}
	return s.server.stop()
}

func (p *profiledProcs) startServer(cfg Config, bin string, args []string, cpus []int, logPath string) (server, error) {
	s, err := p.fakeProcs.startServer(cfg, bin, args, cpus, logPath)
	if err != nil {
		return nil, err
	}
	if i := slices.Index(args, "-metrics-addr"); i >= 0 {
		lis, err := net.Listen("tcp", args[i+1])
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.asked = append(p.asked, r.URL.RawQuery)
			p.mu.Unlock()
			if err := testProfile().Write(w); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
		p.srv = &http.Server{Handler: mux}
		go p.srv.Serve(lis) // closed by profiledServer.stop
	}
	return profiledServer{s, p}, nil
}

func testProfile() *profile.Profile {
	const period = int64(10 * time.Millisecond)
	store := &profile.Function{ID: 1, Name: "github.com/locklab/locklab/store.(*Mutex[...]).Do"}
	sched := &profile.Function{ID: 2, Name: "runtime.schedule"}
	l1 := &profile.Location{ID: 1, Address: 0x1000, Line: []profile.Line{{Function: store, Line: 1}}}
	l2 := &profile.Location{ID: 2, Address: 0x2000, Line: []profile.Line{{Function: sched, Line: 1}}}
	return &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        period,
		DurationNanos: int64(2 * time.Second),
		Function:      []*profile.Function{store, sched},
		Location:      []*profile.Location{l1, l2},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l1}, Value: []int64{30, 30 * period}},
			{Location: []*profile.Location{l2}, Value: []int64{10, 10 * period}},
		},
	}
}

// TestRunOneAttributes: a run with attribution on starts its server with a
// metrics address, profiles it over the window, keeps the profile beside
// the record and stores its categories and system calls; the same run with
// attribution off is the run it always was: no metrics address, nothing
// fetched, nothing stored.
func TestRunOneAttributes(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex", "go", "10", 1
		o.Factors = map[string]string{plan.Attribute: "off,on"}
		o.Duration = 1500 * time.Millisecond
	})
	specs := layout(cfg)
	require.Len(t, specs, 2)
	assert.Equal(t, []string{"001-counter-go-mutex-vus10-rep1", "002-counter-go-mutex-vus10-attr-rep1"}, []string{specs[0].ID, specs[1].ID},
		"the run without attribution, then its twin with it")

	dir := t.TempDir()
	p := &profiledProcs{fakeProcs: &fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}}
	rec, err := runOne(t.Context(), cfg, p, specs[0], dir)
	require.NoError(t, err)
	assert.NotContains(t, p.args, "-metrics-addr", "off: the server runs as ever")
	assert.Nil(t, rec.Attribution)
	p.mu.Lock()
	assert.Empty(t, p.asked, "nothing fetched")
	p.mu.Unlock()
	assert.NoFileExists(t, filepath.Join(dir, specs[0].ID+".cpu.pprof"))
	assert.Empty(t, rec.Problems)

	rec, err = runOne(t.Context(), cfg, p, specs[1], dir)
	require.NoError(t, err)
	assert.Contains(t, p.args, "-metrics-addr")
	assert.Empty(t, rec.Problems)
	p.mu.Lock()
	assert.Equal(t, []string{"seconds=2"}, p.asked, "the 1.5 s window in the handler's whole seconds, rounded up")
	p.mu.Unlock()
	require.NotNil(t, rec.Attribution)
	assert.Equal(t, specs[1].ID+".cpu.pprof", rec.Attribution.Profile)
	assert.FileExists(t, filepath.Join(dir, rec.Attribution.Profile))
	assert.Equal(t, int64(40), rec.Attribution.Samples)
	assert.InDelta(t, 0.3, rec.Attribution.CPUSeconds["store"], 1e-9)
	assert.InDelta(t, 0.1, rec.Attribution.CPUSeconds["scheduler"], 1e-9)
	assert.Equal(t, uint64(500), rec.Attribution.Calls, "the server's requests over the window")
	assert.GreaterOrEqual(t, rec.Attribution.ReadSyscalls, int64(1), "this process read its own /proc files")
	store, err := rec.CategoryUs("store")
	require.NoError(t, err)
	assert.InDelta(t, 0.75*rec.Derived.ServerCPUPerCallUs, store, 1e-9)

	// The control: a server with no profile to give fails the run's
	// attribution, and says so.
	bare := &fakeProcs{admin: &fakeAdmin{}, applied: 500, acked: 500}
	rec, err = runOne(t.Context(), cfg, bare, specs[1], t.TempDir())
	require.NoError(t, err)
	assert.Nil(t, rec.Attribution)
	require.NotEmpty(t, rec.Problems)
	assert.Contains(t, rec.Problems[0], "attribution: ")
}

func TestAttributeConfig(t *testing.T) {
	cfg := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,noop", "go", "10", 4
		o.Factors = map[string]string{plan.Attribute: "blocks=2"}
		o.Duration = 1500 * time.Millisecond
	})
	var profiled []int
	for _, s := range layout(cfg) {
		if attributes(cfg, s) {
			profiled = append(profiled, s.Rep)
		}
	}
	assert.Equal(t, []int{2, 2, 4, 4}, profiled, "every run of blocks 2 and 4")
	off := testConfig(t, func(o *Options) {
		o.Workloads, o.Modes, o.Drivers, o.VUs, o.Reps = "counter", "mutex,noop", "go", "10", 4
		o.Duration = 1500 * time.Millisecond
	})
	assert.Equal(t, PlanDuration(off, layout(off))+4*500*time.Millisecond, PlanDuration(cfg, layout(cfg)),
		"each of the 4 profiled runs waits for its profile's last half second")

	for _, tt := range []struct {
		name    string
		edit    func(o *Options)
		wantErr string
	}{
		{"more blocks than the study", func(o *Options) { o.Factors = map[string]string{plan.Attribute: "blocks=5"}; o.Reps = 4 }, "5 blocks asked of a study of 4"},
		{"a sample beside another value", func(o *Options) { o.Factors = map[string]string{plan.Attribute: "off,blocks=2"} }, "give it alone"},
		{"-profile too", func(o *Options) { o.Factors = map[string]string{plan.Attribute: "on"}; o.Profile = "1" }, "-profile and -attribute"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			tt.edit(&o)
			_, err := NewConfig(o, 2)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
