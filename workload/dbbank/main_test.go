package dbbank

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// One MariaDB and one Redis for the package's tests, started once: each
// test has a database of its own on the shared server (newDSN).
var (
	testDB    *dbinst.MariaDB
	testRedis *dbinst.Redis
	databases atomic.Int32
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dbbank-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if testDB, err = dbinst.StartMariaDB(ctx, dir+"/mariadb", "--innodb-flush-log-at-trx-commit=2"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testDB.Stop()
	if testRedis, err = dbinst.StartRedis(ctx, dir+"/redis"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testRedis.Stop()
	code := m.Run()
	_ = testRedis.Stop()
	_ = testDB.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// newDSN is a fresh database of the test's own on the shared server.
func newDSN(t testing.TB) string {
	t.Helper()
	dsn, err := testDB.NewDatabase(t.Context(), fmt.Sprintf("t%d", databases.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
