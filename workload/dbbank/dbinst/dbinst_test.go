package dbinst

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gone reports whether no process has pid any more.
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestMariaDB: a private MariaDB answers on its socket with the database
// made; killed and restarted on the same directory it still has what was
// committed; stopped, its process is gone and everything it wrote is under
// its directory.
func TestMariaDB(t *testing.T) {
	dir := t.TempDir()
	m, err := StartMariaDB(t.Context(), filepath.Join(dir, "db"), "--innodb-flush-log-at-trx-commit=2")
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop() })
	assert.Contains(t, m.Version, "MariaDB")
	db, err := sql.Open("mysql", m.DSN())
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(t.Context(), "CREATE TABLE t (v INT)")
	require.NoError(t, err)
	_, err = db.ExecContext(t.Context(), "INSERT INTO t VALUES (42)")
	require.NoError(t, err)

	pid := m.PID()
	require.NoError(t, m.Kill())
	assert.True(t, gone(pid), "killed")
	require.NoError(t, m.Restart(t.Context()))
	var v int
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT v FROM t").Scan(&v))
	assert.Equal(t, 42, v, "committed before the kill")

	pid = m.PID()
	require.NoError(t, m.Stop())
	assert.True(t, gone(pid), "stopped")
	require.NoError(t, m.Stop(), "a second Stop is harmless")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing beside its own directory")
}

// TestMariaDBThatCannotStart: a data directory mariadbd cannot use is an
// error naming the binary, with the tail of its log, and nothing is left
// running.
func TestMariaDBThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data"), 0o755)) // no system tables
	_, err := StartMariaDB(t.Context(), dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mariadbd did not start")
	assert.Contains(t, err.Error(), filepath.Join(dir, "mariadb.log"), "its log's tail")
}

// TestRedis: a private Redis answers PING on its address and is gone once
// stopped.
func TestRedis(t *testing.T) {
	r, err := StartRedis(t.Context(), t.TempDir())
	require.NoError(t, err)
	assert.Contains(t, r.Version, "Redis")
	require.NoError(t, ping(t.Context(), r.Addr))
	pid := r.PID()
	require.NoError(t, r.Stop())
	assert.True(t, gone(pid))
	assert.Error(t, ping(t.Context(), r.Addr), "nothing answers after Stop")
}
