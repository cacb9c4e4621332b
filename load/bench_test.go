package load_test

import (
	"bufio"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/load"
)

// The benchmark's callers and connections: the lab's default plan runs
// 10 and 100 callers over 4 connections, the driver on one CPU
// (GOMAXPROCS=1, -cpu 1 here).
const (
	benchCallers = 16
	benchConns   = 4
)

// serverProcess starts this test binary as the server (TestMain,
// load.ServerProcessEnv) in another process, so that the benchmark's
// process CPU is the driver's alone.
func serverProcess(tb testing.TB, mode string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), load.ServerProcessEnv+"="+mode, "GOMAXPROCS=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(tb, err)
	return strings.TrimSpace(addr)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syscalls is the process's read and write system calls so far
// (/proc/self/io's syscr and syscw).
func syscalls(tb testing.TB) (reads, writes int64) {
	tb.Helper()
	b, err := os.ReadFile("/proc/self/io")
	require.NoError(tb, err)
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}

// BenchmarkDriverCallCPU is the driver's cost per call against the real
// server in another process: CPU time (cpu-ns/call), read and write system
// calls and allocations, with the collector's target cmd/load sets (GOGC
// overrides it, as for cmd/load).
//
//	go test -run '^$' -bench DriverCallCPU -cpu 1 -benchtime 2s -count 3 ./load
func BenchmarkDriverCallCPU(b *testing.B) {
	addr := serverProcess(b, "mutex")
	if _, ok := os.LookupEnv("GOGC"); !ok { // as cmd/load runs
		defer debug.SetGCPercent(debug.SetGCPercent(load.GCPercent))
	}
	for _, wl := range load.WorkloadNames() {
		b.Run(wl, func(b *testing.B) {
			cfg := load.DefaultConfig()
			cfg.Addr, cfg.Workload, cfg.Callers, cfg.Conns, cfg.Reset = addr, wl, benchCallers, benchConns, true
			d, err := load.NewDriver(b.Context(), cfg)
			require.NoError(b, err)
			defer d.Close()
			var next atomic.Int64
			var failed atomic.Pointer[error]
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime(b)
			r0, w0 := syscalls(b)
			ctx := b.Context()
			var wg sync.WaitGroup
			for i := range benchCallers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := d.Call(ctx, i); err != nil {
							failed.CompareAndSwap(nil, &err)
						}
					}
				})
			}
			wg.Wait()
			cpu := cpuTime(b) - cpu0
			r1, w1 := syscalls(b)
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/call")
			b.ReportMetric(float64(r1-r0)/float64(b.N), "reads/call")
			b.ReportMetric(float64(w1-w0)/float64(b.N), "writes/call")
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
		})
	}
}
