package dbinst

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The test binary re-executed with helperEnv set to a directory is a
// starter of private servers (helper) that TestNothingLeftAfterKill9 kills.
const (
	helperEnv        = "DBINST_TEST_HELPER"
	helperMariaDBEnv = "DBINST_TEST_HELPER_MARIADB"  // also a MariaDB
	helperNoDeathEnv = "DBINST_TEST_HELPER_NO_DEATH" // the control: no death signal
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helper(dir))
	}
	goleak.VerifyTestMain(m)
}

// helper starts a private Redis (and a MariaDB when helperMariaDBEnv is
// set) in dir, prints "pids" and their PIDs, and waits until its stdin
// closes or it is killed.
func helper(dir string) int {
	if os.Getenv(helperNoDeathEnv) != "" {
		deathSignal = 0
	}
	ctx := context.Background()
	r, err := StartRedis(ctx, filepath.Join(dir, "redis"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer r.Stop()
	pids := []string{strconv.Itoa(r.PID())}
	if os.Getenv(helperMariaDBEnv) != "" {
		m, err := StartMariaDB(ctx, filepath.Join(dir, "db"), "--innodb-flush-log-at-trx-commit=2")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer m.Stop()
		pids = append(pids, strconv.Itoa(m.PID()))
	}
	fmt.Println("pids", strings.Join(pids, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// gone reports whether no process runs as pid any more: none has it, or
// only a zombie does (a server whose starter died is reaped by whoever
// adopts it, which may never happen in a container).
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ") // after the command's name
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// startHelper runs the test binary as a helper with env and returns it
// with its servers' PIDs; the helper's stdin stays open until it dies.
func startHelper(t *testing.T, env ...string) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+t.TempDir())...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Wait() // its stderr is whole once it has exited
		t.Fatalf("the helper printed no PIDs (%v): %s", err, stderr.String())
	}
	f := strings.Fields(line)
	require.Equal(t, "pids", f[0], line)
	var pids []int
	for _, s := range f[1:] {
		pid, err := strconv.Atoi(s)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return cmd, pids
}

// waitGone polls until every pid is gone or within has passed, and
// returns those still running.
func waitGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		left := slices.DeleteFunc(slices.Clone(pids), gone)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond) // polling the kernel's process table: nothing to wait on
	}
}

// TestNothingLeftAfterKill9: a process that started a private MariaDB and
// Redis and is then killed with SIGKILL, which lets it stop nothing, leaves
// neither running. The control: started without the death signal, its
// Redis outlives it (and is killed here).
func TestNothingLeftAfterKill9(t *testing.T) {
	cmd, pids := startHelper(t, helperMariaDBEnv+"=1")
	require.Len(t, pids, 2, "Redis and MariaDB")
	for _, pid := range pids {
		require.False(t, gone(pid), "%d runs before the kill", pid)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	left := waitGone(pids, 30*time.Second)
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL) // a failed test leaves nothing either
	}
	assert.Empty(t, left, "servers still running after their starter's SIGKILL")

	t.Run("control", func(t *testing.T) {
		cmd, pids := startHelper(t, helperNoDeathEnv+"=1")
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		left := waitGone(pids, time.Second)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		assert.Equal(t, pids, left, "without the death signal Redis outlives its starter")
		assert.Empty(t, waitGone(pids, 30*time.Second))
	})
}

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

// TestMariaDBsStartedAtOnce: several private instances installed and
// started at the same moment, as side-by-side rounds start one per arm,
// all come up (sharing /tmp, about one install in six failed) and keep
// their temporary files inside their own directories.
func TestMariaDBsStartedAtOnce(t *testing.T) {
	const n = 6
	dir := t.TempDir()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := StartMariaDB(t.Context(), filepath.Join(dir, strconv.Itoa(i)))
			if err == nil {
				t.Cleanup(func() { _ = m.Stop() })
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "instance %d", i)
		assert.DirExists(t, filepath.Join(dir, strconv.Itoa(i), "tmp"))
	}
}

// TestMariaDBFromTemplate: two servers started from one installed data
// directory each get a copy of their own: what one commits the other does
// not see, and the template is left as it was. A directory that is not a
// data directory (the control) is refused before any server starts.
func TestMariaDBFromTemplate(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "template", "data")
	require.NoError(t, InstallData(t.Context(), tmpl))
	require.True(t, IsData(tmpl))
	before, err := os.ReadDir(tmpl)
	require.NoError(t, err)

	var dbs []*sql.DB
	for _, name := range []string{"a", "b"} {
		m, err := StartMariaDBFrom(t.Context(), filepath.Join(dir, name), tmpl)
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Stop() })
		db, err := sql.Open("mysql", m.DSN())
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		dbs = append(dbs, db)
	}
	_, err = dbs[0].ExecContext(t.Context(), "CREATE TABLE t (v INT)")
	require.NoError(t, err)
	_, err = dbs[1].ExecContext(t.Context(), "CREATE TABLE t (v INT)")
	require.NoError(t, err, "b's copy has no table a made")
	after, err := os.ReadDir(tmpl)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after), "the template is untouched")
	_, err = os.Stat(filepath.Join(tmpl, Database))
	assert.ErrorIs(t, err, os.ErrNotExist, "no server ran on the template")

	_, err = StartMariaDBFrom(t.Context(), filepath.Join(dir, "c"), t.TempDir())
	require.ErrorContains(t, err, "not a MariaDB data directory")
}

// TestMariaDBPortTakenMeanwhile: a port taken between freePort's look and
// the server's bind (another process bound it first) makes the server
// exit, and StartMariaDB starts it again on another port; the control, a
// port taken on every try, is an error that says so.
func TestMariaDBPortTakenMeanwhile(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	real := freePort
	t.Cleanup(func() { freePort = real })
	tries := 0
	freePort = func() (int, error) {
		tries++
		if tries == 1 {
			return taken, nil
		}
		return real()
	}
	tmpl := filepath.Join(t.TempDir(), "data")
	require.NoError(t, InstallData(t.Context(), tmpl))
	m, err := StartMariaDBFrom(t.Context(), filepath.Join(t.TempDir(), "db"), tmpl)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop() })
	assert.Equal(t, 2, tries)
	assert.NotEqual(t, taken, m.port)

	freePort = func() (int, error) { return taken, nil }
	_, err = StartMariaDBFrom(t.Context(), filepath.Join(t.TempDir(), "db"), tmpl)
	require.ErrorContains(t, err, portTaken)
}
