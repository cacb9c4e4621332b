package replicas

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/locklab/locklab/internal/lab/balancer"
	"github.com/locklab/locklab/internal/lab/cgroup"
	"github.com/locklab/locklab/internal/lab/clientlb"
	"github.com/locklab/locklab/internal/lab/hosts"
	"github.com/locklab/locklab/internal/lab/proc"
	"github.com/locklab/locklab/server"
)

// Port is where every replica listens on its host's address.
const Port = 50055

// OwnerEnv marks every process a cluster starts with its runner's PID, so
// that Sweep finds them, and their children, after the runner died.
const OwnerEnv = "LOCKLAB_REPLICAS_OWNER"

// workPrefix begins the name of a cluster's directory (balancers' private
// directories), followed by the runner's PID.
const workPrefix = "locklab-replicas-"

// CgroupMount is where the machine's cgroup file system is mounted.
const CgroupMount = "/sys/fs/cgroup"

// Config is one cluster. The zero value is not usable: Server and Mode are
// required.
type Config struct {
	Server   string // the locklab binary
	Mode     string // the design every replica runs
	Replicas int    // 0 means 1
	Front    Front  // how calls reach the replicas; Direct needs one replica
	// ReplicaCPUs is each replica's CPU quota, equal for all (0: no quota).
	ReplicaCPUs float64
	// DSN is the database every replica keeps the bank in (-backend mysql
	// -db-dsn, each replica named in it by DBOwner); "" keeps every
	// workload in each replica's memory (-backend memory). A DSN reaches the
	// database over a unix socket: a replica's host has no route to the
	// machine's loopback, while a socket's path is the same in every
	// network namespace.
	DSN string
	// Args are more server flags (after -mode, -addr, -backend and
	// -require-key, which the cluster gives).
	Args []string
}

func (c Config) validate() error {
	var errs []error
	if c.Server == "" {
		errs = append(errs, errors.New("replicas: no server binary"))
	}
	if m, err := server.LookupMode(c.Mode); err != nil {
		errs = append(errs, fmt.Errorf("replicas: %w", err))
	} else if c.DSN != "" {
		if err := m.CanServeOn(server.BackendMySQL, server.DurabilityNone); err != nil {
			errs = append(errs, fmt.Errorf("replicas: %w", err))
		}
	}
	if c.Replicas < 0 || c.Replicas > hosts.MaxHosts {
		errs = append(errs, fmt.Errorf("replicas: %d replicas: want 1..%d", c.Replicas, hosts.MaxHosts))
	}
	if c.Front.Name == Direct.Name && c.Replicas > 1 {
		errs = append(errs, fmt.Errorf("replicas: the direct front reaches one replica, not %d", c.Replicas))
	}
	if c.ReplicaCPUs < 0 {
		errs = append(errs, fmt.Errorf("replicas: a quota of %v CPUs", c.ReplicaCPUs))
	}
	return errors.Join(errs...)
}

// Cluster is a running cluster. Its owner calls Close.
type Cluster struct {
	cfg      Config
	work     string
	set      *hosts.Set
	ctl      *cgroup.Controller
	groups   []*cgroup.Group // one per replica, then the balancer's
	servers  []*proc.Server
	bal      *balancer.Balancer
	front    *grpc.ClientConn
	replicas []*grpc.ClientConn
}

// Start sweeps what dead runners left (Sweep), then starts the cluster:
// hosts, replicas in their groups, the balancer, the connections. On
// failure it removes whatever it had made.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg.Replicas = max(cfg.Replicas, 1)
	if cfg.Front.Name == "" {
		cfg.Front = Direct
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := Sweep(ctx); err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	var err error
	pid := os.Getpid()
	if c.work, err = os.MkdirTemp("", fmt.Sprintf("%s%d-", workPrefix, pid)); err != nil {
		return err
	}
	if c.set, err = hosts.Start(ctx, hosts.Options{Hosts: c.cfg.Replicas}); err != nil {
		return err
	}
	if c.ctl, err = cgroup.Open(CgroupMount); err != nil {
		return err
	}
	env := []string{fmt.Sprintf("%s=%d", OwnerEnv, pid)}
	var addrs []string
	for i, h := range c.set.Hosts() {
		g, err := c.group(c.cfg.ReplicaCPUs)
		if err != nil {
			return err
		}
		addr := netip.AddrPortFrom(h.Addr, Port).String()
		args := []string{"-mode", c.cfg.Mode, "-addr", addr, "-require-key", balancer.KeyHeader}
		if c.cfg.DSN != "" {
			// The bank the driver resets to, so that the first replica
			// seeds a bank of that size, not the server's default.
			args = append(args, "-backend", server.BackendMySQL, "-db-dsn", c.cfg.DSN, "-db-owner", DBOwner(i),
				"-accounts", strconv.Itoa(Accounts), "-balance", strconv.Itoa(InitialBalance))
		} else {
			args = append(args, "-backend", server.BackendMemory)
		}
		args = append(args, c.cfg.Args...)
		// The group first, then the host: ip netns exec mounts a sysfs of
		// the namespace's own, where the cgroup files are not.
		argv := append(inGroup(g), h.Command(ctx, c.cfg.Server, args...).Args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		p, err := proc.Start(cmd)
		if err != nil {
			return err
		}
		s, err := proc.AwaitServer(p)
		if err != nil {
			return err
		}
		c.servers = append(c.servers, s)
		addrs = append(addrs, s.Addr)
	}
	for _, a := range addrs {
		cc, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		c.replicas = append(c.replicas, cc)
	}
	switch f := c.cfg.Front; {
	case f.Balancer != "":
		k, err := balancer.Lookup(f.Balancer)
		if err != nil {
			return err
		}
		// The balancer's CPU is the hop's cost: a group of its own, no
		// quota, which nginx's workers start in too.
		g, err := c.weighted()
		if err != nil {
			return err
		}
		if c.bal, err = balancer.Start(k, balancer.Config{Policy: f.Policy, Backends: addrs, TempDir: c.work, Env: env, Prefix: inGroup(g)}); err != nil {
			return err
		}
		c.front, err = grpc.NewClient(c.bal.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		return err
	case f.Client != "":
		p, err := clientlb.Lookup(f.Client)
		if err != nil {
			return err
		}
		c.front, err = clientlb.Dial(addrs, p)
		return err
	default:
		c.front = c.replicas[0]
		return nil
	}
}

// inGroup is a command prefix that runs the rest of its command line in
// g: a shell writes its own PID to the group's files, then execs the
// program, whose every thread and child starts in the group.
func inGroup(g *cgroup.Group) []string {
	files := g.ProcsFiles()
	return []string{"sh", "-c", `echo $$ > "$0" && echo $$ > "$1" && shift && exec "$@"`, files[0], files[len(files)-1]}
}

// group makes a replica's group: a quota of cpus, or none.
func (c *Cluster) group(cpus float64) (*cgroup.Group, error) {
	if cpus == 0 {
		return c.weighted()
	}
	g, err := c.ctl.New(cpus)
	if err == nil {
		c.groups = append(c.groups, g)
	}
	return g, err
}

func (c *Cluster) weighted() (*cgroup.Group, error) {
	g, err := c.ctl.NewWeighted()
	if err == nil {
		c.groups = append(c.groups, g)
	}
	return g, err
}

// DBOwner is replica i's name in the database's ownership table.
func DBOwner(i int) string { return "r" + strconv.Itoa(i) }

// Front is the connection the driver calls through.
func (c *Cluster) Front() *grpc.ClientConn { return c.front }

// Replicas are direct connections to each replica, for the checks.
func (c *Cluster) Replicas() []*grpc.ClientConn { return c.replicas }

// Config is the cluster's configuration, defaults filled in.
func (c *Cluster) Config() Config { return c.cfg }

// CPU is the CPU time the replicas and the balancer have used since they
// started: their groups' usage.
func (c *Cluster) CPU() (servers, balancer time.Duration, err error) {
	for i, g := range c.groups {
		u, e := g.Usage()
		err = errors.Join(err, e)
		if i < len(c.servers) {
			servers += u
		} else {
			balancer += u
		}
	}
	return servers, balancer, err
}

// QuotaUse is the replicas' CPU time as a share of their quota over d
// (1: every replica used all of its quota); 0 without quotas.
func (c *Cluster) QuotaUse(servers time.Duration, d time.Duration) float64 {
	if c.cfg.ReplicaCPUs == 0 || d <= 0 {
		return 0
	}
	return servers.Seconds() / (c.cfg.ReplicaCPUs * float64(c.cfg.Replicas) * d.Seconds())
}

// Close stops and removes everything the cluster made, in the reverse of
// the order it was made. It is safe to call twice.
func (c *Cluster) Close() error {
	var errs []error
	if c.front != nil && c.cfg.Front.Name != Direct.Name {
		errs = append(errs, c.front.Close())
	}
	c.front = nil
	for _, cc := range c.replicas {
		errs = append(errs, cc.Close())
	}
	c.replicas = nil
	if c.bal != nil {
		errs = append(errs, c.bal.Close())
		c.bal = nil
	}
	for _, s := range c.servers {
		errs = append(errs, s.Stop())
	}
	c.servers = nil
	for _, g := range c.groups {
		errs = append(errs, g.Remove())
	}
	c.groups = nil
	if c.set != nil {
		errs = append(errs, c.set.Close())
		c.set = nil
	}
	if c.work != "" {
		errs = append(errs, os.RemoveAll(c.work))
		c.work = ""
	}
	return errors.Join(errs...)
}

// Leftovers lists what runner pid's clusters made that is still there:
// namespaces and links, cgroups, processes marked with OwnerEnv and work
// directories. After Close, and after Sweep once pid is dead, it is empty.
func Leftovers(ctx context.Context, pid int) ([]string, error) {
	var out []string
	names, err := hosts.Made(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if n.PID == pid {
			out = append(out, "host "+n.Name)
		}
	}
	for g, owner := range groups() {
		if owner == pid {
			out = append(out, "cgroup "+g)
		}
	}
	for p, owner := range processes() {
		if owner == pid {
			out = append(out, "process "+strconv.Itoa(p))
		}
	}
	for d, owner := range workDirs() {
		if owner == pid {
			out = append(out, "directory "+d)
		}
	}
	return out, nil
}

// Sweep removes what clusters of runners no longer alive left: it kills
// their processes (nginx's workers, which outlive their master; the rest
// die with the runner), then removes their hosts, cgroups and work
// directories.
func Sweep(ctx context.Context) error {
	// Only the processes of runners that made clusters (a work directory
	// names them) or that carry the mark: the cgroups' names are shared
	// with the runner's other groups, whose processes are not ours.
	ran := map[int]bool{}
	for _, owner := range workDirs() {
		ran[owner] = true
	}
	marked := map[int]bool{}
	for p := range processes() {
		marked[p] = hasMark(p)
	}
	dead := map[int]int{}
	for p, owner := range processes() {
		if !proc.Alive(owner) && (ran[owner] || marked[p]) {
			dead[p] = owner
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	for p := range dead {
		for i := 0; proc.Alive(p) && !gone(p) && i < 100; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	_, err := hosts.Sweep(ctx)
	if _, e := cgroup.Open(CgroupMount); e != nil && !errors.Is(e, cgroup.ErrUnavailable) {
		err = errors.Join(err, e) // Open sweeps the groups of the dead
	}
	for d, owner := range workDirs() {
		if !proc.Alive(owner) {
			err = errors.Join(err, os.RemoveAll(d))
		}
	}
	return err
}

// processes are the live processes of clusters, and their runners' PIDs:
// those in the clusters' cgroups (a balancer's workers among them) and
// those that carry OwnerEnv.
func processes() map[int]int {
	out := map[int]int{}
	for g, owner := range groups() {
		procs, _ := os.ReadFile(filepath.Join(g, "cgroup.procs"))
		for _, f := range strings.Fields(string(procs)) {
			if p, err := strconv.Atoi(f); err == nil && !gone(p) {
				out[p] = owner
			}
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == os.Getpid() || gone(p) {
			continue
		}
		if owner, ok := mark(p); ok {
			out[p] = owner
		}
	}
	return out
}

// mark is the OwnerEnv of process p, if it has one.
func mark(p int) (owner int, ok bool) {
	env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "environ"))
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, found := strings.CutPrefix(kv, OwnerEnv+"="); found {
			owner, err := strconv.Atoi(v)
			return owner, err == nil
		}
	}
	return 0, false
}

func hasMark(p int) bool { _, ok := mark(p); return ok }

// groups are the lab's cgroups, in every hierarchy (v2's root, v1's
// controllers), and the PIDs of the processes that made them
// (cgroup's names: locklab-PID-N).
func groups() map[string]int {
	out := map[string]int{}
	dirs, _ := filepath.Glob(filepath.Join(CgroupMount, "locklab-*"))
	v1, _ := filepath.Glob(filepath.Join(CgroupMount, "*", "locklab-*"))
	for _, d := range append(dirs, v1...) {
		rest := strings.TrimPrefix(filepath.Base(d), "locklab-")
		p, _, ok := strings.Cut(rest, "-")
		if owner, err := strconv.Atoi(p); ok && err == nil {
			out[d] = owner
		}
	}
	return out
}

// gone says whether process p has ended: no such process, or a zombie
// whose parent is yet to reap it.
func gone(p int) bool {
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
	if err != nil {
		return true
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// workDirs are the clusters' directories in the temporary directory, and
// their owners' PIDs.
func workDirs() map[string]int { return proc.Owned(os.TempDir(), workPrefix) }
