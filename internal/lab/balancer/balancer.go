package balancer

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/locklab/locklab/internal/lab/proc"
)

// KeyHeader is the request header the key policy hashes: a client puts the
// key its call is about (an account, a KV key) there.
const KeyHeader = "x-key"

// The policies, by name.
const (
	// RoundRobin sends each call to the next replica in turn.
	RoundRobin = "roundrobin"
	// Key hashes KeyHeader onto a consistent-hash ring of the replicas: one
	// key, one replica. A call without the header is balanced round robin.
	Key = "key"
)

// Policies is the one list of policies; every Kind writes a config for each.
var Policies = []string{RoundRobin, Key}

// StartTimeout bounds how long a balancer may take to accept connections.
const StartTimeout = 10 * time.Second

var (
	// ErrUnsupported is returned when the balancer's binary is not installed.
	ErrUnsupported = errors.New("balancer: not installed")
	// ErrNoRuntimeAPI is returned by Drain, Ready and Status on a balancer
	// without a runtime API (nginx).
	ErrNoRuntimeAPI = errors.New("balancer: no runtime API")
)

// Kind is one balancer program: how to configure it and start it.
type Kind struct {
	Name string
	// Binary is the program, looked up on PATH and in /usr/sbin.
	Binary string
	// Balance holds, for each of Policies, the lines of config that choose
	// it.
	Balance map[string]string
	// config is the text/template of the whole config file; it is executed
	// with configData.
	config string
	// args are the program's arguments, given the private directory and
	// the config file's path.
	args func(dir, config string) []string
	// RuntimeAPI says whether Drain, Ready and Status work: a stats socket
	// named admin.sock in the private directory.
	RuntimeAPI bool
}

// configData is what a Kind's config template is executed with.
type configData struct {
	Dir      string // the private directory
	Addr     string // where the balancer listens
	Balance  string // the policy's lines
	Backends []string
	Root     bool // the balancer runs as root (nginx must be told to keep its workers so)
}

// Kinds is the one list of balancers.
var Kinds = []Kind{haproxy, nginx}

var haproxy = Kind{
	Name:   "haproxy",
	Binary: "haproxy",
	Balance: map[string]string{
		RoundRobin: "balance roundrobin",
		Key:        "balance hdr(" + KeyHeader + ")\n\thash-type consistent",
	},
	// check: a TCP connect every 200 ms; one failure marks a server DOWN,
	// one success UP again, so that a test sees the change quickly.
	config: `global
	pidfile {{.Dir}}/haproxy.pid
	stats socket {{.Dir}}/admin.sock mode 600 level admin
defaults
	mode http
	timeout connect 5s
	timeout client 1m
	timeout server 1m
	retries 3
	option redispatch
frontend fe
	bind {{.Addr}} proto h2
	default_backend be
backend be
	{{.Balance}}
{{- range $i, $b := .Backends}}
	server s{{$i}} {{$b}} proto h2 check inter 200ms fall 1 rise 1
{{- end}}
`,
	args:       func(dir, config string) []string { return []string{"-f", config, "-db"} },
	RuntimeAPI: true,
}

var nginx = Kind{
	Name:   "nginx",
	Binary: "nginx",
	Balance: map[string]string{
		RoundRobin: "# round robin: nginx's default",
		Key:        "hash $http_" + strings.ReplaceAll(KeyHeader, "-", "_") + " consistent;",
	},
	// keepalive_requests: without it nginx closes a client's connection
	// after 1,000 requests, which a gRPC client sees as a stall.
	config: `worker_processes 1;
pid {{.Dir}}/nginx.pid;
error_log stderr warn;
{{- if .Root}}
user root;
{{- end}}
events {
	worker_connections 1024;
}
http {
	access_log off;
	client_body_temp_path {{.Dir}}/body;
	proxy_temp_path {{.Dir}}/proxy;
	fastcgi_temp_path {{.Dir}}/fastcgi;
	uwsgi_temp_path {{.Dir}}/uwsgi;
	scgi_temp_path {{.Dir}}/scgi;
	upstream be {
		{{.Balance}}
{{- range .Backends}}
		server {{.}};
{{- end}}
		keepalive 32;
	}
	server {
		listen {{.Addr}} http2;
		keepalive_requests 1000000;
		location / {
			grpc_pass grpc://be;
		}
	}
}
`,
	args: func(dir, config string) []string {
		return []string{"-p", dir, "-c", config, "-e", "stderr", "-g", "daemon off;"}
	},
}

// Lookup returns the Kind of this name.
func Lookup(name string) (Kind, error) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("balancer: no balancer %q; balancers: %s", name, strings.Join(Names(), ", "))
}

// Names lists Kinds' names.
func Names() []string {
	var names []string
	for _, k := range Kinds {
		names = append(names, k.Name)
	}
	return names
}

// Path returns the kind's binary, or ErrUnsupported.
func (k Kind) Path() (string, error) {
	if p, err := exec.LookPath(k.Binary); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", k.Binary)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s (Debian package %s)", ErrUnsupported, k.Binary, k.Binary)
}

// Config is what a balancer is started with. Its zero value is a round
// robin balancer on a free loopback port, with no backends (which Start
// refuses).
type Config struct {
	// Policy is one of Policies ("" means RoundRobin).
	Policy string
	// Backends are the replicas' host:port, h2c gRPC servers; their order
	// names them s0, s1, ... for Drain and Status.
	Backends []string
	// Addr is where the balancer listens ("" picks a free loopback port).
	Addr string
	// TempDir is where the private directory is made ("" the system's
	// temporary directory): a study puts it under a folder named for its
	// runner, so that what a killed runner left can be found.
	TempDir string
	// Env is added to the balancer's environment.
	Env []string
	// Prefix is a command the balancer is run through: the balancer's own
	// command line follows its arguments (a shell that puts itself in a
	// cgroup and execs the rest, so that nginx's workers start there).
	Prefix []string
}

func (c Config) validate() error {
	if c.Policy != "" && !slices.Contains(Policies, c.Policy) {
		return fmt.Errorf("balancer: policy %q: want one of %s", c.Policy, strings.Join(Policies, ", "))
	}
	if len(c.Backends) == 0 {
		return errors.New("balancer: no backends")
	}
	for _, b := range c.Backends {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return fmt.Errorf("balancer: backend %q: %v", b, err)
		}
	}
	return nil
}

// Balancer is one running balancer. Its owner calls Close.
type Balancer struct {
	kind Kind
	dir  string
	addr string
	proc *proc.Proc
}

// Start writes the kind's config for cfg into a new private directory,
// starts the balancer and waits until it accepts connections. On failure
// it stops what it started and removes the directory.
func Start(k Kind, cfg Config) (*Balancer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bin, err := k.Path()
	if err != nil {
		return nil, err
	}
	cfg.Policy = cmp.Or(cfg.Policy, RoundRobin)
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	// A port of the system's choice is free when chosen, not always when
	// the balancer binds it a moment later (another process's connection
	// may take it): such a start is tried again on another port.
	_, port, _ := net.SplitHostPort(cfg.Addr)
	tries := 1
	if port == "0" {
		tries = 3
	}
	for try := 1; ; try++ {
		b, err := startOnce(k, cfg, bin)
		if err == nil || try == tries {
			return b, err
		}
	}
}

// startOnce is one try of Start, at cfg.Addr.
func startOnce(k Kind, cfg Config, bin string) (*Balancer, error) {
	var err error
	// Readiness is a connection accepted at Addr, so Addr must be free
	// first: otherwise whoever holds it would answer for the balancer.
	if cfg.Addr, err = freePort(cfg.Addr); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "locklab-"+k.Name+"-")
	if err != nil {
		return nil, err
	}
	b := &Balancer{kind: k, dir: dir, addr: cfg.Addr}
	fail := func(err error) (*Balancer, error) { return nil, errors.Join(err, b.Close()) }
	path := filepath.Join(dir, k.Name+".conf")
	f, err := os.Create(path)
	if err != nil {
		return fail(err)
	}
	tmpl, err := template.New(k.Name).Parse(k.config)
	if err == nil {
		err = tmpl.Execute(f, configData{Dir: dir, Addr: cfg.Addr, Balance: k.Balance[cfg.Policy], Backends: cfg.Backends, Root: os.Geteuid() == 0})
	}
	if err := errors.Join(err, f.Close()); err != nil {
		return fail(err)
	}
	argv := append(append(slices.Clone(cfg.Prefix), bin), k.args(dir, path)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if cfg.Env != nil {
		cmd.Env = append(os.Environ(), cfg.Env...)
	}
	if b.proc, err = proc.Start(cmd); err != nil {
		return fail(err)
	}
	if err := b.proc.WaitDial(cfg.Addr, StartTimeout); err != nil {
		return fail(fmt.Errorf("balancer: %s: %w", k.Name, err))
	}
	if k.RuntimeAPI {
		// HAProxy may accept calls a moment before its socket is in place
		// (it binds a temporary name and renames it).
		if err := b.waitRuntimeAPI(StartTimeout); err != nil {
			return fail(err)
		}
	}
	return b, nil
}

// Addr is where the balancer listens.
func (b *Balancer) Addr() string { return b.addr }

// PID is the balancer's process (nginx's master).
func (b *Balancer) PID() int { return b.proc.PID() }

// Dir is the balancer's private directory (its config, pid file, socket).
func (b *Balancer) Dir() string { return b.dir }

// Close stops the balancer and removes its directory. It is safe to call
// twice.
func (b *Balancer) Close() error {
	var err error
	if b.proc != nil {
		err = b.proc.Stop()
	}
	return errors.Join(err, os.RemoveAll(b.dir))
}

// Drain stops sending new calls to backend i (s<i>); calls in flight finish.
func (b *Balancer) Drain(i int) error { return b.setState(i, "drain") }

// Ready undoes Drain.
func (b *Balancer) Ready(i int) error { return b.setState(i, "ready") }

func (b *Balancer) setState(i int, state string) error {
	out, err := b.command(fmt.Sprintf("set server be/s%d state %s", i, state))
	if err != nil {
		return err
	}
	if out = strings.TrimSpace(out); out != "" {
		return fmt.Errorf("balancer: %s: set server be/s%d state %s: %s", b.kind.Name, i, state, out)
	}
	return nil
}

// Status returns each backend's status as the balancer sees it ("UP",
// "DOWN", "DRAIN", ...), in the order of Config.Backends.
func (b *Balancer) Status() ([]string, error) {
	out, err := b.command("show stat")
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# "))).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("balancer: %s: show stat: %v: %q", b.kind.Name, err, out)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	px, sv, st := col("pxname"), col("svname"), col("status")
	if px < 0 || sv < 0 || st < 0 {
		return nil, fmt.Errorf("balancer: %s: show stat has no pxname, svname or status: %q", b.kind.Name, rows[0])
	}
	var status []string
	for _, r := range rows[1:] {
		if r[px] == "be" && strings.HasPrefix(r[sv], "s") {
			status = append(status, r[st])
		}
	}
	return status, nil
}

// waitRuntimeAPI waits until the runtime API answers.
func (b *Balancer) waitRuntimeAPI(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := b.command("show info")
		if err == nil {
			return nil
		}
		select {
		case <-b.proc.Exited():
			return fmt.Errorf("balancer: %s exited: %s", b.kind.Name, b.proc.Tail())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("balancer: %s: runtime API not ready in %v: %w", b.kind.Name, timeout, err)
		}
	}
}

// command sends one command to the runtime API and returns its answer.
func (b *Balancer) command(cmd string) (string, error) {
	if !b.kind.RuntimeAPI {
		return "", fmt.Errorf("%w: %s", ErrNoRuntimeAPI, b.kind.Name)
	}
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "unix", filepath.Join(b.dir, "admin.sock"))
	if err != nil {
		return "", fmt.Errorf("balancer: %s runtime API: %w", b.kind.Name, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", fmt.Errorf("balancer: %s runtime API: %w", b.kind.Name, err)
	}
	out, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		return "", fmt.Errorf("balancer: %s runtime API: %s: %w", b.kind.Name, cmd, err)
	}
	return string(out), nil
}

// freePort returns addr (with port 0: a port of the system's choice) if it
// was free a moment ago.
func freePort(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("balancer: listen address: %w", err)
	}
	addr = ln.Addr().String()
	return addr, ln.Close()
}
