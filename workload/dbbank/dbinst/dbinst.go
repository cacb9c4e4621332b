// Package dbinst starts private MariaDB and Redis servers for the bank's
// database backend: in a directory of the caller's, on loopback, as child
// processes that it stops by their PID. Nothing is written outside the
// directory and nothing is left running once Stop returns, nor once the
// process that started them dies, even by SIGKILL (start: the kernel kills
// them with it); the directory is then left behind. The tests start
// one of each per package; the server starts them when no -db-dsn or
// -redis-addr is given; the runner starts them per run.
package dbinst

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Database is the database the bank's tables live in on a private server.
const Database = "locklab"

// The binaries, found on PATH (Debian's mariadb-server and redis-server).
const (
	mariadbInstall = "mariadb-install-db"
	mariadbServer  = "mariadbd"
	redisServer    = "redis-server"
)

// startTimeout bounds how long a server may take to answer once started.
const startTimeout = 60 * time.Second

// stopTimeout is how long a server may take to exit on SIGTERM before it is
// killed.
const stopTimeout = 30 * time.Second

// proc is a server child process and its log.
type proc struct {
	name string // the binary
	log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // Wait's error, read after done
}

// lookPath finds a binary on PATH or in /usr/sbin, where Debian puts
// mariadbd (not on a user's PATH).
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if p, err2 := exec.LookPath(filepath.Join("/usr/sbin", name)); err2 == nil {
		return p, nil
	}
	return "", fmt.Errorf("dbinst: %s is not installed (make db-servers installs it from Debian): %w", name, err)
}

// deathSignal is what a server gets when its starter dies; the tests' control
// sets it to 0 (none) to show that the servers then outlive it.
var deathSignal = syscall.SIGKILL

// start starts name from a goroutine that locks itself to its OS thread and
// stays there, waiting on the process, for the process's life. The child
// gets Pdeathsig SIGKILL, which the kernel sends when the thread that
// started it ends: that thread ends only when the child has exited (the
// goroutine returns) or when this whole process dies, so a server killed
// with SIGKILL takes its private MariaDB and Redis with it, and an
// instance is never killed while it is in use.
func start(name, logPath string, args ...string) (*proc, error) {
	path, err := lookPath(name)
	if err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dbinst: %w", err)
	}
	defer lf.Close()
	p := &proc{name: name, log: logPath, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() { // owned by p: stop and kill wait for done
		// Never unlocked: a goroutine that returns locked takes its
		// thread with it, and by then the child has exited.
		runtime.LockOSThread()
		cmd := exec.Command(path, args...)
		cmd.Stdout, cmd.Stderr = lf, lf
		// A group of its own, so that a Ctrl-C at the terminal reaches
		// only the owner, which then stops the server after its own last
		// call; killed with this process's last thread.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
		if err := cmd.Start(); err != nil {
			started <- err
			close(p.done)
			return
		}
		p.cmd = cmd
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("dbinst: starting %s: %w", name, err)
	}
	return p, nil
}

// failed is the error of a server that did not start: its binary, why, and
// the tail of its log.
func (p *proc) failed(why error) error {
	return fmt.Errorf("dbinst: %s did not start: %w\n%s", p.name, why, logTail(p.log, 20))
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the exit, killing after stopTimeout.
func (p *proc) stop() error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
		return p.kill()
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return nil
}

// logTail is the last n lines of the file at path.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return path + ":\n" + strings.Join(lines, "\n")
}

// waitReady calls ready until it succeeds, the process exits, or
// startTimeout passes. A server that is starting refuses connections; there
// is nothing to wait on but asking again.
func (p *proc) waitReady(ctx context.Context, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.failed(fmt.Errorf("it exited (%v); last attempt to connect: %w", p.err, last))
		case <-ctx.Done():
			_ = p.kill()
			return p.failed(fmt.Errorf("no answer within %v: %w", startTimeout, last))
		case <-tick.C:
		}
	}
}

// version is the first line `name --version` prints.
func version(name string) string {
	path, err := lookPath(name)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(bytes.SplitN(out, []byte("\n"), 2)[0]))
}

// MariaDBVersion is what mariadbd --version says, or why it cannot.
func MariaDBVersion() string { return version(mariadbServer) }

// RedisVersion is what redis-server --version says, or why it cannot.
func RedisVersion() string { return version(redisServer) }

// freePort is a loopback TCP port nobody listened on a moment ago.
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dbinst: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// MariaDB is a private MariaDB server whose data, socket and log live in
// Dir. The bank reaches it through the socket (DSN).
type MariaDB struct {
	Dir     string
	Version string // mariadbd --version
	port    int
	extra   []string // more mariadbd options
	p       *proc
}

// StartMariaDB starts a MariaDB server in dir (created if missing): a new
// data directory is initialised first (mariadb-install-db), an existing one
// is reused, so that a server killed and started again on the same dir finds
// its data. It returns once the server answers and the database Database
// exists. extra are more mariadbd options, e.g. the tests'
// --innodb-flush-log-at-trx-commit=2 (a commit survives the server's
// crash, not the machine's, without an fsync each).
func StartMariaDB(ctx context.Context, dir string, extra ...string) (*MariaDB, error) {
	return StartMariaDBFrom(ctx, dir, "", extra...)
}

// StartMariaDBFrom is StartMariaDB with a new data directory copied from
// template, a data directory InstallData made (and no server uses), instead
// of installed: an install runs a server of its own for seconds of CPU,
// a copy takes a fraction of one. An empty template installs.
func StartMariaDBFrom(ctx context.Context, dir, template string, extra ...string) (*MariaDB, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dbinst: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dbinst: %w", err)
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(data); errors.Is(err, os.ErrNotExist) {
		if template == "" {
			err = InstallData(ctx, data)
		} else {
			err = copyData(data, template)
		}
		if err != nil {
			return nil, err
		}
	}
	m := &MariaDB{Dir: dir, Version: MariaDBVersion(), extra: extra}
	// The port is free when freePort looks and taken back at once: a
	// process started in between (another arm's server or driver, side by
	// side) may bind it first. The server then cannot bind, says so in
	// its log, and exits: it gets another port.
	for try := 1; ; try++ {
		if m.port, err = freePort(); err != nil {
			return nil, err
		}
		err = m.start(ctx)
		if err == nil || try == portTries || !strings.Contains(err.Error(), portTaken) {
			return m, err
		}
	}
}

// portTries is how many ports StartMariaDB tries; portTaken is what
// mariadbd's log says when another process bound its port first.
const (
	portTries = 3
	portTaken = "Address already in use"
)

func (m *MariaDB) start(ctx context.Context) error {
	// Each instance its own temporary directory: with the default /tmp,
	// instances started at once (side-by-side rounds start one per arm)
	// removed each other's temporary tables and failed to install.
	if err := os.MkdirAll(filepath.Join(m.Dir, "tmp"), 0o700); err != nil {
		return fmt.Errorf("dbinst: %w", err)
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(m.Dir, "data"), "--tmpdir=" + filepath.Join(m.Dir, "tmp"), "--socket=" + m.Socket(),
		"--pid-file=" + filepath.Join(m.Dir, "mariadb.pid"), "--port=" + strconv.Itoa(m.port),
		"--bind-address=127.0.0.1", userArg(), "--skip-name-resolve",
		// Enough connections for a -db-pool of a few hundred.
		"--max-connections=1000"}
	p, err := start(mariadbServer, filepath.Join(m.Dir, "mariadb.log"), append(args, m.extra...)...)
	if err != nil {
		return err
	}
	m.p = p
	return p.waitReady(ctx, func(ctx context.Context) error {
		db, err := sql.Open("mysql", m.rootDSN(""))
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+Database)
		return err
	})
}

// Socket is the path of the server's socket.
func (m *MariaDB) Socket() string { return filepath.Join(m.Dir, "sock") }

func (m *MariaDB) rootDSN(db string) string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "unix", m.Socket(), db
	return c.FormatDSN()
}

// DSN is the data source name of the database Database, for -db-dsn.
func (m *MariaDB) DSN() string { return m.rootDSN(Database) }

// NewDatabase creates a database called name (dropping one of that name
// first) and returns its data source name: a test's own tables.
func (m *MariaDB) NewDatabase(ctx context.Context, name string) (string, error) {
	db, err := sql.Open("mysql", m.rootDSN(""))
	if err != nil {
		return "", fmt.Errorf("dbinst: %w", err)
	}
	defer db.Close()
	for _, q := range []string{"DROP DATABASE IF EXISTS `" + name + "`", "CREATE DATABASE `" + name + "`"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return "", fmt.Errorf("dbinst: %s: %w", q, err)
		}
	}
	return m.rootDSN(name), nil
}

// PID is the server's process id (while it runs).
func (m *MariaDB) PID() int { return m.p.cmd.Process.Pid }

// Stop shuts the server down (SIGTERM) and waits for it to exit; safe to
// call more than once.
func (m *MariaDB) Stop() error { return m.p.stop() }

// Kill kills the server with SIGKILL, as a crash would, and waits for it to
// exit; Restart brings it back on the same data.
func (m *MariaDB) Kill() error { return m.p.kill() }

// Restart starts a server that was stopped or killed again on the same data
// directory and socket.
func (m *MariaDB) Restart(ctx context.Context) error {
	if !m.p.exited() {
		return fmt.Errorf("dbinst: %s in %s is still running", mariadbServer, m.Dir)
	}
	return m.start(ctx)
}

// Redis is a private Redis server on loopback, keeping nothing on disk.
type Redis struct {
	Dir     string
	Addr    string // host:port
	Version string // redis-server --version
	p       *proc
}

// StartRedis starts a Redis server with its working directory and log in
// dir (created if missing), saving nothing, and returns once it answers.
func StartRedis(ctx context.Context, dir string) (*Redis, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dbinst: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dbinst: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Redis{Dir: dir, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Version: RedisVersion()}
	p, err := start(redisServer, filepath.Join(dir, "redis.log"), "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return nil, err
	}
	r.p = p
	return r, p.waitReady(ctx, func(ctx context.Context) error { return ping(ctx, r.Addr) })
}

// ping sends Redis a PING in its wire protocol and expects +PONG.
func ping(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(buf[:n], []byte("+PONG")) {
		return fmt.Errorf("PING answered %q", buf[:n])
	}
	return nil
}

// Stop shuts the server down and waits for it to exit; safe to call more
// than once.
func (r *Redis) Stop() error { return r.p.stop() }

// PID is the server's process id (while it runs).
func (r *Redis) PID() int { return r.p.cmd.Process.Pid }

// userArg is mariadbd's --user: root must name itself to be allowed to run
// the server; any other user runs it as itself.
func userArg() string {
	if os.Getuid() == 0 {
		return "--user=root"
	}
	return "--user=" + strconv.Itoa(os.Getuid())
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// InstallData makes a new MariaDB data directory at data
// (mariadb-install-db), its temporary files in data's parent's tmp.
func InstallData(ctx context.Context, data string) error {
	install, err := lookPath(mariadbInstall)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(data), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("dbinst: %w", err)
	}
	out, err := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--tmpdir="+tmp, userArg(),
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(data) // a half-made data dir would be reused next time
		return fmt.Errorf("dbinst: %s failed: %w\n%s", mariadbInstall, err, tail(string(out), 20))
	}
	return nil
}

// IsData reports whether dir looks like a data directory InstallData made:
// it holds the system schema's directory, mysql.
func IsData(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "mysql"))
	return err == nil && fi.IsDir()
}

// copyData copies the data directory template to data.
func copyData(data, template string) error {
	if !IsData(template) {
		return fmt.Errorf("dbinst: %s is not a MariaDB data directory (no mysql/ in it)", template)
	}
	if err := os.CopyFS(data, os.DirFS(template)); err != nil {
		_ = os.RemoveAll(data)
		return fmt.Errorf("dbinst: copy %s: %w", template, err)
	}
	return nil
}
