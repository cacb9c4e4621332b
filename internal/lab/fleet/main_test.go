package fleet

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/lab/proc"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// bin is the locklab server and testDB the MariaDB every test's fleet
// shares (a database of its own per test, newDSN), started once.
var (
	bin       string
	testDB    *dbinst.MariaDB
	databases atomic.Int32
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fleet-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if bin, err = proc.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testDB, err = dbinst.StartMariaDB(context.Background(), dir+"/mariadb", "--innodb-flush-log-at-trx-commit=2"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
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
	dsn, err := testDB.NewDatabase(t.Context(), fmt.Sprintf("f%d", databases.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
