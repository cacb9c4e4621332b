package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/internal/work"
	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/server/internal/wal"
	"github.com/locklab/locklab/store"
)

// The crash load: crashClients callers, each alternating Increment(1) and a
// transfer between crashAccounts accounts, at most crashOps calls each. Few
// enough transfers that no account's history (workload.HistoryKept) rolls
// over, so every acknowledged transfer can be looked up after the restart.
const (
	crashClients  = 16
	crashOps      = 150
	crashAccounts = 1000
	crashAmount   = 7
	// crashSnapshotEvery makes snapshots happen during the load, so the
	// crash can land in or after one.
	crashSnapshotEvery = 200
)

// ackedTransfer is a transfer the server acknowledged.
type ackedTransfer struct {
	seq      uint64
	from, to uint32
}

// crashLoad is what the callers saw before the server died.
type crashLoad struct {
	mu        sync.Mutex // guards the fields below
	incSent   int64      // Increment calls sent, acknowledged or not
	incAcked  int64
	maxValue  int64 // largest value an acknowledged Increment returned
	transfers []ackedTransfer
	counter   bool // the mode serves the counter
}

// driveCrashLoad runs the callers until each has made crashOps calls or the
// server is gone, calling kill once acks acknowledgements have come back.
// The counter is driven and checked where it is durable: when the mode
// serves it and it is not left in memory beside a bank in a database.
func driveCrashLoad(t *testing.T, addr string, mode server.Mode, o Options, kill func()) *crashLoad {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	load := &crashLoad{counter: mode.Serves("counter") && o.Backend != server.BackendMySQL}
	var acked atomic.Int64
	killAt := int64(crashClients * crashOps / 3)
	var killOnce sync.Once
	var wg sync.WaitGroup
	for c := range crashClients {
		conn := dial(t, addr)
		wg.Go(func() {
			counter, bank := pb.NewCounterServiceClient(conn), pb.NewBankServiceClient(conn)
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for i := range crashOps {
				if i%2 == 0 && load.counter {
					load.mu.Lock()
					load.incSent++
					load.mu.Unlock()
					r, err := counter.Increment(ctx, &pb.IncrementRequest{Delta: 1})
					if err != nil {
						return // the server is gone
					}
					load.mu.Lock()
					load.incAcked++
					load.maxValue = max(load.maxValue, r.GetValue())
					load.mu.Unlock()
				} else {
					from := 1 + rng.Uint32N(crashAccounts)
					to := 1 + (from+rng.Uint32N(crashAccounts-1))%crashAccounts
					r, err := bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: from, ToAccount: to, Amount: crashAmount})
					if err != nil {
						return
					}
					load.mu.Lock()
					load.transfers = append(load.transfers, ackedTransfer{seq: r.GetSeq(), from: from, to: to})
					load.mu.Unlock()
				}
				if acked.Add(1) == killAt {
					killOnce.Do(kill)
				}
			}
		})
	}
	wg.Wait()
	killOnce.Do(kill) // if the load finished first: still a crash, just not mid-load
	return load
}

// lost lists every acknowledged command the restarted server does not have,
// and every invariant it breaks: the crash test's checker.
func (load *crashLoad) lost(ctx context.Context, conn *grpc.ClientConn, total int64) []string {
	var out []string
	admin, bank := pb.NewAdminServiceClient(conn), pb.NewBankServiceClient(conn)
	stats, err := admin.GetStats(ctx, &pb.GetStatsRequest{})
	if err != nil {
		return []string{fmt.Sprint("GetStats: ", err)}
	}
	if load.counter {
		v := stats.GetCounterValue()
		if v < load.incAcked || v < load.maxValue {
			out = append(out, fmt.Sprintf("counter %d after restart: %d increments acknowledged, the largest value returned %d", v, load.incAcked, load.maxValue))
		}
		if v > load.incSent {
			out = append(out, fmt.Sprintf("counter %d after restart: only %d increments sent", v, load.incSent))
		}
	}
	if stats.GetTotalBalance() != total {
		out = append(out, fmt.Sprintf("total balance %d after restart, want %d: money not conserved", stats.GetTotalBalance(), total))
	}
	history := map[uint32]map[uint64]bool{}
	seqs := func(id uint32) (map[uint64]bool, error) {
		if h, ok := history[id]; ok {
			return h, nil
		}
		r, err := bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: id, Limit: 1000})
		if err != nil {
			return nil, err
		}
		h := map[uint64]bool{}
		for _, tr := range r.GetTransfers() {
			h[tr.GetSeq()] = true
		}
		history[id] = h
		return h, nil
	}
	for _, tr := range load.transfers {
		for _, id := range []uint32{tr.from, tr.to} {
			h, err := seqs(id)
			if err != nil {
				return append(out, fmt.Sprint("GetHistory: ", err))
			}
			if !h[tr.seq] {
				out = append(out, fmt.Sprintf("acknowledged transfer seq %d (%d→%d) missing from account %d's history", tr.seq, tr.from, tr.to, id))
			}
		}
		if tr.seq > stats.GetTransfers() {
			out = append(out, fmt.Sprintf("acknowledged transfer seq %d beyond the bank's sequence %d", tr.seq, stats.GetTransfers()))
		}
	}
	return out
}

// kill9 kills the server without warning, as a power cut would, and waits
// for it to be gone. Killing it twice is harmless.
func (p *serverProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		require.NoError(t, err)
	}
	select {
	case <-p.exited:
	case <-time.After(exitBudget):
		t.Fatal("the server outlived SIGKILL")
	}
}

// crashAndRestart drives the load on a server started with o (and
// crashAccounts accounts), kill -9s it mid-load, restarts it with the same
// options and returns the load and the checker's findings.
func crashAndRestart(t *testing.T, mode server.Mode, o Options) (*crashLoad, []string, *serverProc) {
	t.Helper()
	o.Mode, o.Accounts = mode.Name, crashAccounts
	p := startServer(t, o)
	// kill runs in a load goroutine: it only sends the signal; the test
	// goroutine waits for the exit.
	var killErr error
	load := driveCrashLoad(t, p.addr, mode, o, func() { killErr = p.cmd.Process.Signal(syscall.SIGKILL) })
	require.NoError(t, killErr)
	p.kill9(t)
	load.mu.Lock()
	defer load.mu.Unlock()
	t.Logf("%s: %d/%d increments acknowledged/sent, %d transfers acknowledged before kill -9", mode.Name, load.incAcked, load.incSent, len(load.transfers))
	require.NotEmpty(t, load.transfers, "the load ran")

	p2 := startServer(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return load, load.lost(ctx, dial(t, p2.addr), crashAccounts*20_000_000), p2
}

// durableModes are the server modes whose design the registry says can be
// durable.
func durableModes(t *testing.T) []server.Mode {
	t.Helper()
	var out []server.Mode
	for _, d := range store.Designs() {
		if !d.Durable {
			continue
		}
		m, err := server.LookupMode(d.Name)
		require.NoError(t, err, "every design is a mode")
		if m.CanServeOn(server.BackendMemory, server.DurabilityWAL) != nil {
			continue // db-rowlock: its state is in a database (db_test.go)
		}
		out = append(out, m)
	}
	require.NotEmpty(t, out)
	return out
}

// TestCrashKill9 is the real crash test: for every durable design, kill -9
// mid-load, restart on the same directory, and every acknowledged command is
// there — the counter at least the acknowledged increments and at most the
// sent ones, money conserved, every acknowledged transfer's seq in both
// accounts' histories. The modes run side by side (each its own server and
// directory): most of a mode's time is its log's syncs.
func TestCrashKill9(t *testing.T) {
	for _, mode := range durableModes(t) {
		t.Run(mode.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			load, lost, p2 := crashAndRestart(t, mode, walOptions(mode, dir, crashSnapshotEvery))
			assert.Empty(t, lost, "acknowledged commands lost in a crash")
			if load.counter {
				assert.Positive(t, load.incAcked)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stats, err := pb.NewAdminServiceClient(dial(t, p2.addr)).GetStats(ctx, &pb.GetStatsRequest{})
			require.NoError(t, err)
			assert.Equal(t, server.DurabilityWAL, stats.GetDurability())
			assert.Positive(t, stats.GetRecoverySeconds())
			assert.LessOrEqual(t, stats.GetWalRecordsReplayed(), uint64(3*crashSnapshotEvery), "snapshots bound the replay")
			t.Logf("recovered %d records in %.1f ms", stats.GetWalRecordsReplayed(), stats.GetRecoverySeconds()*1000)
			p2.kill9(t)
		})
	}
}

// TestCrashControl: without durability the same crash loses acknowledged
// commands, and the checker says so: it can fail.
func TestCrashControl(t *testing.T) {
	mode := durableModes(t)[0]
	_, lost, p2 := crashAndRestart(t, mode, options(mode.Name))
	assert.NotEmpty(t, lost, "a server without a log must lose the acknowledged commands")
	t.Logf("the checker found, as it should: %s …", lost[0])
	p2.kill9(t)
}

// lastRecordOffset returns where the last record of a segment starts.
func lastRecordOffset(t *testing.T, b []byte) int {
	t.Helper()
	const headerLen, recHeader = 24, 8
	last := -1
	for off := headerLen; off < len(b); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		last = off
		off += recHeader + n
		require.LessOrEqual(t, off, len(b), "a whole log")
	}
	require.GreaterOrEqual(t, last, 0, "the segment has records")
	return last
}

func newestSegment(t *testing.T, dir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.wal"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	slices.Sort(segs)
	return segs[len(segs)-1]
}

// increments makes n acknowledged Increment(1)s and stops the server.
func increments(t *testing.T, mode server.Mode, dir string, n int) {
	t.Helper()
	p := startServer(t, walOptions(mode, dir, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := pb.NewCounterServiceClient(dial(t, p.addr))
	for range n {
		_, err := c.Increment(ctx, &pb.IncrementRequest{Delta: 1})
		require.NoError(t, err)
	}
	p.kill9(t)
	seg := newestSegment(t, filepath.Join(dir, "counter"))
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.Positive(t, lastRecordOffset(t, b), "acknowledged increments are in the log")
}

func counterValue(t *testing.T, addr string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := pb.NewCounterServiceClient(dial(t, addr)).GetValue(ctx, &pb.GetValueRequest{})
	require.NoError(t, err)
	return r.GetValue()
}

// counterMode is a durable mode that serves the counter.
func counterMode(t *testing.T) server.Mode {
	t.Helper()
	for _, m := range durableModes(t) {
		if m.Serves("counter") {
			return m
		}
	}
	t.Fatal("no durable mode serves the counter")
	return server.Mode{}
}

// TestCorruptLastRecord: a last record with a bad checksum (a torn write) is
// cut on restart, reported in one line, and the server serves the rest; a
// bad record in the middle makes the server refuse to start, changing
// nothing.
func TestCorruptLastRecord(t *testing.T) {
	mode := counterMode(t)
	tests := []struct {
		name    string
		corrupt func(b []byte) []byte
		want    int64 // counter after restart; -1: the server refuses
	}{
		{"last record's checksum", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }, 9},
		{"last record half written", func(b []byte) []byte { return b[:len(b)-2] }, 9},
		{"garbage after the last record", func(b []byte) []byte { return append(b, 1, 2, 3) }, 10},
		{"a middle record", func(b []byte) []byte { b[lastRecordOffset(t, b)-1] ^= 0xff; return b }, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			increments(t, mode, dir, 10)
			seg := newestSegment(t, filepath.Join(dir, "counter"))
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(seg, tt.corrupt(b), 0o644))

			if tt.want < 0 {
				before := dirContents(t, dir)
				code, out := runProcess(t, walOptions(mode, dir, 0))
				assert.Equal(t, 1, code, "output:\n%s", out)
				assert.Contains(t, out, "wal: corrupt log")
				assert.Contains(t, out, "valid record after it")
				assert.Equal(t, before, dirContents(t, dir), "a refused data directory is left as it was")
				return
			}
			p := startServer(t, walOptions(mode, dir, 0))
			assert.Equal(t, tt.want, counterValue(t, p.addr))
			var cuts []string
			for _, l := range p.stderrLines() {
				if strings.Contains(l, "cut a torn tail") {
					cuts = append(cuts, l)
				}
			}
			require.Len(t, cuts, 1, "one line reports the cut; stderr:\n%s", p.stderr())
			assert.Contains(t, cuts[0], filepath.Join(dir, "counter"))
			p.kill9(t)
		})
	}
}

// dirContents maps every file under dir to its content and mode.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			out[p] = fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = fi.Mode().String() + " " + string(b)
		return err
	}))
	return out
}

// TestBadDataDir: a data directory the server cannot use is refused with a
// clear message and status 1, and nothing in it changes.
func TestBadDataDir(t *testing.T) {
	mode := counterMode(t)
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns -data-dir
		// asNobody runs the server as an unprivileged user (root passes
		// every permission check).
		asNobody bool
		want     string
	}{
		{"a file, not a directory", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(p, []byte("not a directory"), 0o644))
			return p
		}, false, "is not a directory"},
		{"a log of another format version", func(t *testing.T) string {
			dir := t.TempDir()
			increments(t, mode, dir, 3)
			seg := newestSegment(t, filepath.Join(dir, "bank"))
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			binary.LittleEndian.PutUint32(b[8:], wal.Version+1)
			binary.LittleEndian.PutUint32(b[20:], crc32.Checksum(b[:20], crc32.MakeTable(crc32.Castagnoli)))
			require.NoError(t, os.WriteFile(seg, b, 0o644))
			return dir
		}, false, fmt.Sprintf("format version %d; this build reads version %d only", wal.Version+1, wal.Version)},
		{"no write permission", func(t *testing.T) string {
			dir := t.TempDir()
			increments(t, mode, dir, 3)
			require.NoError(t, os.Chmod(dir, 0o555))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
			return dir
		}, true, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := tt.setup(t)
			before := dirContents(t, dataDir)
			o := walOptions(mode, dataDir, 0)
			var code int
			var out string
			if tt.asNobody && os.Geteuid() == 0 {
				code, out = runAsNobody(t, o)
			} else {
				code, out = runProcess(t, o)
			}
			assert.Equal(t, 1, code, "output:\n%s", out)
			assert.Contains(t, out, "locklab: server: data directory")
			assert.Contains(t, out, tt.want)
			assert.NotContains(t, out, "listening on")
			assert.Equal(t, before, dirContents(t, dataDir), "nothing touched")
		})
	}
}

// runAsNobody runs the command as user nobody (65534), from a copy of this
// test binary nobody may execute; the data directory's parents are opened
// for search.
func runAsNobody(t *testing.T, o Options) (int, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "locklab")
	b, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	for d := filepath.Dir(bin); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	for d := filepath.Dir(o.DataDir); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	cmd := command(t, bin, o)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return runCmd(t, cmd)
}

// TestDurabilityRefused: a design the registry does not call durable, and
// noop, refuse -durability wal as a usage error, before touching the
// directory.
func TestDurabilityRefused(t *testing.T) {
	var names []string
	for _, d := range store.Designs() {
		if !d.Durable {
			names = append(names, d.Name)
		}
	}
	for _, m := range server.Modes() {
		if !m.StoreBacked() {
			names = append(names, m.Name)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			o := options(name)
			o.Durability, o.DataDir = server.DurabilityWAL, dir
			var stderr strings.Builder
			err := Run(t.Context(), o, io.Discard, &stderr)
			assert.ErrorIs(t, err, ErrUsage)
			assert.Contains(t, stderr.String(), "cannot be durable")
			_, err = os.Stat(dir)
			assert.True(t, os.IsNotExist(err), "the data directory was not created")
		})
	}
}

func TestDurabilityUsage(t *testing.T) {
	mode := counterMode(t)
	tests := []struct {
		name string
		set  func(o *Options)
		want string
	}{
		{"fsync", func(o *Options) { o.Durability = "fsync" }, `-durability "fsync": want one of none, wal`},
		{"no data dir", func(o *Options) { o.Durability = server.DurabilityWAL }, "-durability wal needs -data-dir"},
		{"data dir alone", func(o *Options) { o.DataDir = "x" }, "-data-dir is only used with -durability wal"},
		{"negative work", func(o *Options) { o.Work = -time.Microsecond }, "-work -1µs: want >= 0"},
		{"unknown work kind", func(o *Options) { o.WorkKind = "nap" }, `-work-kind "nap": want one of ` + strings.Join(work.Kinds(), ", ")},
		{"negative snapshot", func(o *Options) {
			o.Durability, o.DataDir, o.SnapshotEvery = server.DurabilityWAL, "x", -1
		}, "-snapshot-every -1: want >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(mode.Name)
			tt.set(&o)
			var stderr strings.Builder
			err := Run(t.Context(), o, io.Discard, &stderr)
			assert.ErrorIs(t, err, ErrUsage)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// walOptions are the options of mode with a write-ahead log in dir (and
// snapshots every n records; 0: the default).
func walOptions(mode server.Mode, dir string, n int) Options {
	o := options(mode.Name)
	o.Durability, o.DataDir, o.SnapshotEvery = server.DurabilityWAL, dir, n
	return o
}
