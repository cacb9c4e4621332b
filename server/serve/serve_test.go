package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
)

// TestUsageErrors: a bad option is refused with a message naming it, as a
// usage error (exit status 2), before any server starts. Errors of flag
// parsing itself are the root command's (main_test.go there).
func TestUsageErrors(t *testing.T) {
	modes := "modes: " + server.ModeNames()
	for _, seed := range []string{"mutex", "inputQ", "noop"} { // the seed's two designs and the ceiling stay
		require.Contains(t, modes, seed)
	}
	with := func(mode string, f func(o *Options)) Options {
		o := options(mode)
		f(&o)
		return o
	}
	tests := []struct {
		name string
		o    Options
		want []string // in the output
	}{
		{"no mode", options(""), []string{"-mode: no mode given", modes}},
		{"unknown mode", options("nosuch"), []string{`unknown mode "nosuch"`, modes}},
		{"question mark", options("?"), []string{`unknown mode "?"`, modes}},
		{"mode in wrong case", options("inputq"), []string{`unknown mode "inputq"`, modes}},
		// The mode is checked first, so a bad flag without -mode still
		// names the modes...
		{"bad scenario, no mode", with("", func(o *Options) { o.Scenario = "Z" }), []string{modes}},
		{"zero accounts, no mode", with("", func(o *Options) { o.Accounts = 0 }), []string{modes}},
		// ...and with a good mode the message names the flag at fault.
		{"bad scenario", with("mutex", func(o *Options) { o.Scenario = "Z" }), []string{`-scenario "Z": want A, B or C`}},
		{"zero accounts", with("inputQ", func(o *Options) { o.Accounts = 0 }), []string{"-accounts 0: want 1..1000000"}},
		{"too many accounts", with("inputQ", func(o *Options) { o.Accounts = 1000001 }), []string{"-accounts 1000001: want 1..1000000"}},
		{"zero balance", with("mutex", func(o *Options) { o.Balance = 0 }), []string{"-balance 0: want > 0"}},
		{"sample not a power of two", with("mutex", func(o *Options) { o.SampleEvery = 3 }), []string{"power of two"}},
		{"negative queue size", with("inputQ", func(o *Options) { o.QueueSize = -1 }), []string{"-queue-size -1: want >= 0"}},
		{"negative shards", with("sharded", func(o *Options) { o.Shards = -2 }), []string{"-shards -2: want >= 0"}},
		{"negative batch limit", with("inputQ-batch", func(o *Options) { o.BatchLimit = -3 }), []string{"-batch-limit -3: want >= 0"}},
		{"negative spin budget", with("inputQ-spin", func(o *Options) { o.SpinBudget = -time.Microsecond }), []string{"-spin-budget -1µs: want >= 0"}},
		{"negative max inflight", with("mutex", func(o *Options) { o.MaxInflight = -1 }), []string{"-max-inflight -1: want a count >= 0 (0: no bound)"}},
		{"negative max calls", with("inputQ", func(o *Options) { o.MaxCalls = -1 }), []string{"-max-calls -1: want a count >= 0 (0: no bound)"}},
		{"negative call work", with("mutex", func(o *Options) { o.CallWork = -time.Microsecond }), []string{"-call-work -1µs: want >= 0"}},
		{"require key not a header", with("mutex", func(o *Options) { o.RequireKey = "x key" }), []string{`-require-key "x key": want a header name of letters, digits`}},
		{"require key of gRPC's own", with("mutex", func(o *Options) { o.RequireKey = "grpc-timeout" }), []string{`-require-key "grpc-timeout": a header gRPC keeps`}},
		{"metrics not a port", with("mutex", func(o *Options) { o.MetricsAddr = "nine" }), []string{`-metrics-addr "nine": port "nine"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			err := Run(t.Context(), tt.o, io.Discard, &stderr)
			require.ErrorIs(t, err, ErrUsage)
			assert.Equal(t, 2, ExitCode(err, io.Discard))
			for _, w := range tt.want {
				assert.Contains(t, stderr.String(), w)
			}
			assert.NotContains(t, stderr.String(), "listening on", "a bad command line must not start a server")
		})
	}
}

// TestExitCode: the statuses Main returns, and the one line it prints for a
// runtime failure (a usage error has printed its own).
func TestExitCode(t *testing.T) {
	tests := []struct {
		err     error
		code    int
		printed string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("wrapped: %w", ErrUsage), 2, ""},
		{errors.New("listen tcp: in use"), 1, "locklab: listen tcp: in use\n"},
	}
	for _, tt := range tests {
		var out strings.Builder
		assert.Equal(t, tt.code, ExitCode(tt.err, &out), "%v", tt.err)
		assert.Equal(t, tt.printed, out.String(), "%v", tt.err)
	}
}

// TestPrintUsage: -help names every mode with its doc, and what a design
// that does not serve every workload lacks, from the registry.
func TestPrintUsage(t *testing.T) {
	var out strings.Builder
	PrintUsage(&out)
	assert.True(t, strings.HasPrefix(out.String(), "usage: locklab -mode MODE"))
	require.NotEmpty(t, server.Modes())
	for _, m := range server.Modes() {
		assert.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(m.Name)+`\s+`+regexp.QuoteMeta(m.Doc)+`$`, out.String(), "mode %s and its doc", m.Name)
		d, ok := m.Design()
		for _, wl := range server.Workloads() {
			if ok && !m.Serves(wl) {
				assert.Regexp(t, `\(serves no .*`+wl+`.*: needs `+regexp.QuoteMeta(d.Needs.String())+`\)`, out.String(), m.Name)
			}
		}
	}
	assert.True(t, strings.HasSuffix(out.String(), "\nflags:\n"), "the flags follow")
}

// TestListModes: -list-modes prints every mode, one per line in the server's
// order, with the workloads it serves, for scripts (make e2e) to range over;
// the lists come from the registry. It exits at once, whatever else is set.
func TestListModes(t *testing.T) {
	o := options("nosuch")
	o.ListModes = true
	var out strings.Builder
	require.NoError(t, Run(t.Context(), o, &out, io.Discard))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var modes []server.Mode
	for _, m := range server.Modes() {
		if m.CanServeOn(server.BackendMemory, server.DurabilityNone) == nil {
			modes = append(modes, m)
		}
	}
	require.Less(t, len(modes), len(server.Modes()), "a mode that serves only a database (db-rowlock) is left out")
	require.Len(t, lines, len(modes))
	for i, m := range modes {
		f := strings.Fields(lines[i])
		require.NotEmpty(t, f)
		assert.Equal(t, m.Name, f[0])
		for _, wl := range server.Workloads() {
			assert.Equal(t, m.Serves(wl), slices.Contains(f[1:], wl), "%s serves %s", m.Name, wl)
		}
	}
}

// TestListModesUnderDurability: -list-modes answers for the flags given, so
// a runner asks the binary which modes can keep a write-ahead log; the
// control is that some mode (noop, which keeps no state) is left out.
func TestListModesUnderDurability(t *testing.T) {
	var out strings.Builder
	ListModes(&out, server.DurabilityWAL, server.BackendMemory)
	var listed []string
	for line := range strings.Lines(out.String()) {
		listed = append(listed, strings.Fields(line)[0])
	}
	for _, m := range server.Modes() {
		can := m.CanRun(server.DurabilityWAL) == nil && m.CanServeOn(server.BackendMemory, server.DurabilityWAL) == nil
		assert.Equal(t, can, slices.Contains(listed, m.Name), m.Name)
	}
	assert.NotContains(t, listed, "noop")
}

// TestVersion: -version prints the build's one line to stdout and nothing
// else, whatever else is set. (The real binary's line, with its module and
// Go versions, is checked from the root.)
func TestVersion(t *testing.T) {
	o := options("nosuch")
	o.Version = true
	var stdout, stderr strings.Builder
	require.NoError(t, Run(t.Context(), o, &stdout, &stderr))
	assert.Equal(t, Version()+"\n", stdout.String())
	assert.Empty(t, stderr.String())
	assert.Equal(t, "locklab", strings.Fields(Version())[0])
	assert.Regexp(t, `go1\.\d+`, Version())
}

// TestRun runs the command in this process: it serves the options given,
// and once ctx ends Run returns nil having stopped every goroutine it
// started (goleak checks at the end).
func TestRun(t *testing.T) {
	o := options("inputQ")
	o.Scenario = "b"
	r := startRun(t, o)
	conn := dial(t, r.addr)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := pb.NewCounterServiceClient(conn).Increment(ctx, &pb.IncrementRequest{Delta: 7})
	require.NoError(t, err)
	stats, err := pb.NewAdminServiceClient(conn).GetStats(ctx, &pb.GetStatsRequest{})
	require.NoError(t, err)
	assert.Equal(t, "inputQ", stats.GetMode())
	assert.Equal(t, int64(7), stats.GetCounterValue())
	assert.Equal(t, int64(500*20_000_000), stats.GetTotalBalance(), "-scenario b: odd accounts funded")
	assert.Equal(t, int64(0), stats.GetMinBalance())
	require.NoError(t, conn.Close())

	r.stop(t)
	assert.Equal(t, fmt.Sprintf("locklab: mode=inputQ listening on %s\nlocklab: mode=inputQ stopped\n", r.addr), r.stderr.String())
}

// TestAddrInUse: an address already taken is a runtime failure (status 1),
// not a usage error, and no server says it listens.
func TestAddrInUse(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()

	o := options("mutex")
	o.Addr = lis.Addr().String()
	var stderr strings.Builder
	err = Run(t.Context(), o, io.Discard, &stderr)
	assert.Equal(t, 1, ExitCode(err, &stderr))
	assert.Contains(t, stderr.String(), "locklab: listen tcp "+lis.Addr().String())
	assert.Contains(t, stderr.String(), "address already in use")
	assert.NotContains(t, stderr.String(), "listening on")
}

// TestSignalStopsServer: the command in a process stops on SIGTERM and on
// SIGINT with status 0, printing only its listening and stopped lines.
func TestSignalStopsServer(t *testing.T) {
	tests := []struct {
		mode string
		sig  syscall.Signal
	}{
		{"inputQ", syscall.SIGTERM},
		{"mutex", syscall.SIGTERM},
		{"noop", syscall.SIGTERM},
		{"inputQ", syscall.SIGINT},
		{"mutex", syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.sig.String(), func(t *testing.T) {
			p := startServer(t, options(tt.mode))
			conn := dial(t, p.addr)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			stats, err := pb.NewAdminServiceClient(conn).GetStats(ctx, &pb.GetStatsRequest{})
			require.NoError(t, err)
			assert.Equal(t, tt.mode, stats.GetMode())
			assert.Equal(t, tt.mode != "noop", stats.GetStoreBacked())
			_, err = pb.NewCounterServiceClient(conn).Increment(ctx, &pb.IncrementRequest{Delta: 1})
			require.NoError(t, err)
			require.NoError(t, conn.Close())

			took := p.stop(t, tt.sig)
			t.Logf("exited %v after %v", tt.sig, took)
			assert.Equal(t, []string{
				fmt.Sprintf("locklab: mode=%s listening on %s", tt.mode, p.addr),
				fmt.Sprintf("locklab: mode=%s stopped", tt.mode),
			}, p.stderrLines())
		})
	}
}

// loadResult is what one load goroutine saw.
type loadResult struct {
	values    []int64 // counter values returned by acknowledged Increment(1)s
	transfers int     // acknowledged transfers
	end       error   // the error that ended the loop
	endCode   codes.Code
}

// hammer alternates Increment(1) and TransferMoney on its own connection
// until a call fails for a reason other than insufficient funds (the server
// going away). It calls ready after its first call, so that the caller
// sends the signal only once every client is connected.
func hammer(ctx context.Context, conn *grpc.ClientConn, seed uint64, ready func()) loadResult {
	counter, bank := pb.NewCounterServiceClient(conn), pb.NewBankServiceClient(conn)
	rng := rand.New(rand.NewPCG(seed, 1))
	var res loadResult
	for i := 0; ; i++ {
		var err error
		if i%2 == 0 {
			var r *pb.IncrementResponse
			if r, err = counter.Increment(ctx, &pb.IncrementRequest{Delta: 1}); err == nil {
				res.values = append(res.values, r.GetValue())
			}
		} else {
			from := 1 + rng.Uint32N(1000)
			to := 1 + (from+rng.Uint32N(999))%1000 // never from
			if _, err = bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: 1000}); err == nil {
				res.transfers++
			} else if status.Code(err) == codes.FailedPrecondition {
				err = nil
			}
		}
		if i == 0 {
			ready()
		}
		if err != nil {
			res.end, res.endCode = err, status.Code(err)
			return res
		}
	}
}

// TestSIGTERMUnderLoad: a server busy with 64 clients still exits 0 within
// the budget, its clients all see it go and stop, nothing is printed per
// request, and no acknowledged increment was lost or duplicated. The modes
// run side by side, each its own server process.
func TestSIGTERMUnderLoad(t *testing.T) {
	const clients = 64
	for _, mode := range storeModesServingAll() {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := startServer(t, options(mode))
			// The workers' safety net: cancelled at the end, so none can
			// outlive the test even if the server never answers.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			var (
				ready   sync.WaitGroup
				workers sync.WaitGroup
				results = make([]loadResult, clients)
			)
			ready.Add(clients)
			for i := range clients {
				conn := dial(t, p.addr)
				workers.Add(1)
				go func() { // joined by workers.Wait below
					defer workers.Done()
					results[i] = hammer(ctx, conn, uint64(i), ready.Done)
				}()
			}
			waitTimeout(t, &ready, time.Minute, "the load goroutines' first calls")
			time.Sleep(500 * time.Millisecond)

			took := p.stop(t, syscall.SIGTERM)
			t.Logf("exited %v after SIGTERM under load", took)
			assert.Less(t, took, exitBudget)
			waitTimeout(t, &workers, exitBudget, "the load goroutines to see the server gone")

			var values []int64
			transfers := 0
			for i, r := range results {
				values = append(values, r.values...)
				transfers += r.transfers
				assert.Equal(t, codes.Unavailable, r.endCode, "client %d ended with %v", i, r.end)
			}
			t.Logf("%d acknowledged increments, %d transfers", len(values), transfers)
			require.NotEmpty(t, values, "the load ran")
			assert.Positive(t, transfers, "the load ran")
			// Every acknowledged Increment(1) returns its own value: a
			// repeated value is a lost update.
			slices.Sort(values)
			assert.Equal(t, len(values), len(slices.Compact(values)), "acknowledged increments returned duplicate values")
			assert.GreaterOrEqual(t, values[len(values)-1], int64(len(values)))

			assert.Equal(t, []string{
				fmt.Sprintf("locklab: mode=%s listening on %s", mode, p.addr),
				fmt.Sprintf("locklab: mode=%s stopped", mode),
			}, p.stderrLines(), "stderr holds only the listening and stopped lines")
		})
	}
}
