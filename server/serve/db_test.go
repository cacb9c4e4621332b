package serve

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// The package's MariaDB and Redis, started by the first test that needs
// them (most of the package's tests do not) and stopped by TestMain.
var testDBs struct {
	once  sync.Once
	dir   string
	db    *dbinst.MariaDB
	redis *dbinst.Redis
	err   error
	n     atomic.Int32
}

// testDatabase is a fresh database on the package's MariaDB, and its Redis.
func testDatabase(t *testing.T) (dsn, redisAddr string) {
	t.Helper()
	testDBs.once.Do(func() {
		if testDBs.dir, testDBs.err = os.MkdirTemp("", "serve-test-db-"); testDBs.err != nil {
			return
		}
		ctx := context.Background()
		if testDBs.db, testDBs.err = dbinst.StartMariaDB(ctx, testDBs.dir+"/mariadb", "--innodb-flush-log-at-trx-commit=2"); testDBs.err != nil {
			return
		}
		testDBs.redis, testDBs.err = dbinst.StartRedis(ctx, testDBs.dir+"/redis")
	})
	require.NoError(t, testDBs.err)
	dsn, err := testDBs.db.NewDatabase(t.Context(), fmt.Sprintf("serve%d", testDBs.n.Add(1)))
	require.NoError(t, err)
	return dsn, testDBs.redis.Addr
}

func stopTestDatabase() {
	if testDBs.redis != nil {
		_ = testDBs.redis.Stop()
	}
	if testDBs.db != nil {
		_ = testDBs.db.Stop()
	}
	if testDBs.dir != "" {
		_ = os.RemoveAll(testDBs.dir)
	}
}

// TestBackendUsage: a backend the server does not have, a database flag
// without -backend mysql, or a mode that cannot serve the bank over a
// database (or serves nothing in memory) is a usage error, exit status 2,
// before any database is asked and any server starts.
func TestBackendUsage(t *testing.T) {
	with := func(mode string, f func(o *Options)) Options {
		o := options(mode)
		f(&o)
		return o
	}
	mysql := func(o *Options) { o.Backend, o.DBDSN = server.BackendMySQL, "root@unix(/nonexistent/sock)/x" }
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown backend", with("mutex", func(o *Options) { o.Backend = "postgres" }), `-backend "postgres": want one of memory, mysql`},
		{"dsn in memory", with("mutex", func(o *Options) { o.DBDSN = "x" }), "-db-dsn is only used with -backend mysql"},
		{"cache in memory", with("mutex", func(o *Options) { o.Cache = CacheRedis }), "-cache is only used with -backend mysql"},
		{"unknown cache", with("mutex", func(o *Options) { mysql(o); o.Cache = "memcached" }), `-cache "memcached": want one of none, redis`},
		{"redis without cache", with("mutex", func(o *Options) { mysql(o); o.RedisAddr = "127.0.0.1:1" }), "-redis-addr is only used with -cache redis"},
		{"zero pool", with("mutex", func(o *Options) { mysql(o); o.DBPool = 0 }), "-db-pool 0: want a count >= 1"},
		{"owner in memory", with("mutex", func(o *Options) { o.DBOwner = "r0" }), "-db-owner is only used with -backend mysql"},
		{"no fencing in memory", with("mutex", func(o *Options) { o.DBNoFencing = true }), "-db-no-fencing is only used with -backend mysql"},
		{"template in memory", with("mutex", func(o *Options) { o.DBTemplate = t.TempDir() }), "-db-template is only used with -backend mysql"},
		{"template with a dsn", with("mutex", func(o *Options) { mysql(o); o.DBTemplate = t.TempDir() }), "-db-template is only used without -db-dsn"},
		{"template not a data dir", with("mutex", func(o *Options) { o.Backend, o.DBTemplate = server.BackendMySQL, t.TempDir() }), "not a MariaDB data directory"},
		{"owner too long", with("routed-owner", func(o *Options) { mysql(o); o.DBOwner = strings.Repeat("r", dbbank.MaxOwner+1) }), fmt.Sprintf("want at most %d bytes", dbbank.MaxOwner)},
		{"routed owner in memory", options("routed-owner"), "mode routed-owner serves no workload with its state in memory"},
		{"sharded over a database", with("sharded", mysql), "mode sharded cannot serve the bank with its state in mysql"},
		{"rowlock in memory", options("db-rowlock"), "mode db-rowlock serves no workload with its state in memory"},
		{"noop over a database", with("noop", mysql), "mode noop keeps no state"},
		{"wal over a database", with("mutex", func(o *Options) { mysql(o); o.Durability, o.DataDir = server.DurabilityWAL, t.TempDir() }), "takes no write-ahead log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			err := Run(t.Context(), tt.o, io.Discard, &stderr)
			require.ErrorIs(t, err, ErrUsage)
			assert.Contains(t, stderr.String(), tt.want)
			assert.NotContains(t, stderr.String(), "listening on")
		})
	}
	code, out := runProcess(t, tests[0].o)
	assert.Equal(t, 2, code, "a bad -backend exits 2: %s", out)
	assert.Contains(t, out, tests[0].want)
}

// TestBackendUnreachable: a database that does not answer at start is a
// runtime failure naming it, exit status 1, before the server listens.
func TestBackendUnreachable(t *testing.T) {
	o := options("mutex")
	o.Backend, o.DBDSN = server.BackendMySQL, "root@unix("+t.TempDir()+"/no.sock)/x"
	code, out := runProcess(t, o)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "no.sock")
	assert.Contains(t, out, "does not answer")
	assert.NotContains(t, out, "listening on")
}

// TestCrashKill9Database: kill -9 of a server whose bank is in a database,
// mid-load, loses no acknowledged transfer: restarted on the same database
// it has every one in both accounts' histories, and the money. A design
// that commits groups on the serialised path, without the cache, and
// db-rowlock with it, side by side (workload/dbbank tests every design's
// transactions).
func TestCrashKill9Database(t *testing.T) {
	for _, tt := range []struct {
		mode  string
		cache bool
	}{{"inputQ-batch", false}, {"db-rowlock", true}} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			mode, err := server.LookupMode(tt.mode)
			require.NoError(t, err)
			o := options(tt.mode)
			o.Backend = server.BackendMySQL
			var redis string
			o.DBDSN, redis = testDatabase(t)
			if tt.cache {
				o.Cache, o.RedisAddr = CacheRedis, redis
			}
			_, lost, p2 := crashAndRestart(t, mode, o)
			assert.Empty(t, lost, "acknowledged transfers lost in a crash")
			p2.kill9(t)
		})
	}
}

// TestPrivateDatabase: -backend mysql without -db-dsn starts a private
// MariaDB (and Redis, with -cache redis) for the server's lifetime, says so,
// and serves the bank from it; stopped, the server leaves nothing running.
func TestPrivateDatabase(t *testing.T) {
	o := options("db-rowlock")
	o.Backend, o.Cache = server.BackendMySQL, CacheRedis
	r := startRun(t, o)
	conn := dial(t, r.addr)
	moveAndCheck(t, conn)
	m := regexp.MustCompile(`a private MariaDB \(.+\) in (\S+), -db-dsn`).FindStringSubmatch(r.stderr.String())
	require.NotNil(t, m, r.stderr.String())
	assert.Contains(t, r.stderr.String(), "a private Redis")
	_, err := os.Stat(m[1])
	require.NoError(t, err, "the instance's directory while it runs")
	r.stop(t)
	_, err = os.Stat(m[1])
	assert.ErrorIs(t, err, fs.ErrNotExist, "removed once the server stopped")
}

// moveAndCheck moves 5 from account 1 to 2 and reads it back: balances,
// history and the bank's total.
func moveAndCheck(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx := t.Context()
	bank := pb.NewBankServiceClient(conn)
	tr, err := bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 5})
	require.NoError(t, err)
	bal, err := bank.GetBalance(ctx, &pb.GetBalanceRequest{Account: 2})
	require.NoError(t, err)
	assert.Equal(t, tr.GetToBalance(), bal.GetBalance())
	h, err := bank.GetHistory(ctx, &pb.GetHistoryRequest{Account: 1, Limit: 1})
	require.NoError(t, err)
	require.Len(t, h.GetTransfers(), 1)
	assert.Equal(t, tr.GetSeq(), h.GetTransfers()[0].GetSeq())
	_, err = bank.TransferMoney(ctx, &pb.TransferMoneyRequest{FromAccount: 1, ToAccount: 2, Amount: 1 << 60})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "an overdraft")
	stats, err := pb.NewAdminServiceClient(conn).GetStats(ctx, &pb.GetStatsRequest{})
	require.NoError(t, err)
	assert.Equal(t, int64(workload.DefaultAccounts*workload.DefaultInitialBalance), stats.GetTotalBalance())
}
