package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/locklab/locklab/internal/lab/proc"
)

// ErrUnsupported is returned when this machine cannot make hosts: not root,
// no ip command, or a kernel without network namespaces.
var ErrUnsupported = errors.New("hosts: cannot make network namespaces here")

// Prefix begins the name of every namespace and link this package makes.
// A link's name is at most 15 bytes (IFNAMSIZ), so it stays short.
const Prefix = "llh"

// MaxHosts bounds Options.Hosts: each host takes a /30 of Net, and the
// index is part of a link's name.
const MaxHosts = 64

// DefaultNet is where hosts' /30s are taken from when Options.Net is unset:
// a private range the lab keeps to itself.
var DefaultNet = netip.MustParsePrefix("10.213.0.0/16")

// Options say how many hosts to make and where their addresses come from.
// The zero value makes one host in DefaultNet.
type Options struct {
	// Hosts is how many hosts to make (0 means 1; at most MaxHosts).
	Hosts int
	// Net is the IPv4 range the hosts' /30s are taken from, skipping any
	// /30 that an address of the root namespace already falls in (another
	// runner's hosts). Zero means DefaultNet.
	Net netip.Prefix

	// pid is the owner written into names (0: this process). Tests set a
	// dead PID to make a leftover that Sweep must remove.
	pid int
}

func (o Options) validate() error {
	if o.Hosts < 0 || o.Hosts > MaxHosts {
		return fmt.Errorf("hosts: %d hosts: want 1..%d", o.Hosts, MaxHosts)
	}
	if o.Net.IsValid() && (!o.Net.Addr().Is4() || o.Net.Bits() > 30) {
		return fmt.Errorf("hosts: net %s: want an IPv4 prefix of /30 or wider", o.Net)
	}
	return nil
}

// Host is one network namespace and the veth pair that joins it to the root
// namespace.
type Host struct {
	// Namespace is the network namespace's name (ip netns list).
	Namespace string
	// Link is the root namespace's end of the veth pair; the host's end is
	// named eth0 inside the namespace.
	Link string
	// Addr is the host's address, reachable from the root namespace.
	Addr netip.Addr
	// Gateway is the root namespace's address on the link, reachable from
	// the host.
	Gateway netip.Addr
}

// Command returns a command that runs name with args inside the host's
// namespace (ip netns exec). The caller starts it and waits for it.
func (h Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.Namespace, name}, args...)...)
}

// Set is the hosts one Start made.
type Set struct {
	hosts []Host
}

// Hosts returns the set's hosts, in the order of their index.
func (s *Set) Hosts() []Host { return s.hosts }

// Start makes opts.Hosts hosts. It first sweeps leftovers of dead runners
// (Sweep). On failure it removes whatever it had made and returns the error;
// ErrUnsupported when the machine cannot make namespaces at all.
func Start(ctx context.Context, opts Options) (*Set, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := Supported(); err != nil {
		return nil, err
	}
	opts.Hosts = max(opts.Hosts, 1)
	if !opts.Net.IsValid() {
		opts.Net = DefaultNet
	}
	if opts.pid == 0 {
		opts.pid = os.Getpid()
	}
	// One Start or Sweep at a time on the machine, so that two runners do
	// not pick the same free /30s.
	unlock, err := lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return start(ctx, opts)
}

// start is Start with the lock held and opts complete.
func start(ctx context.Context, opts Options) (*Set, error) {
	if _, err := sweep(ctx); err != nil {
		return nil, err
	}
	nets, err := freeNets(ctx, opts.Net, opts.Hosts)
	if err != nil {
		return nil, err
	}
	idx, err := indexes(ctx, opts.pid, len(nets))
	if err != nil {
		return nil, err
	}
	s := &Set{}
	for i, n := range nets {
		h := Host{
			Namespace: fmt.Sprintf("%s-%d-%d", Prefix, opts.pid, idx[i]),
			Link:      fmt.Sprintf("%s%dv%d", Prefix, opts.pid, idx[i]),
			Gateway:   n.Addr().Next(),
			Addr:      n.Addr().Next().Next(),
		}
		if err := add(ctx, h, n.Bits()); err != nil {
			cleanup := s.Close()
			if !errors.Is(err, errNotMade) {
				cleanup = errors.Join(cleanup, remove(h))
			}
			return nil, errors.Join(err, cleanup)
		}
		s.hosts = append(s.hosts, h)
	}
	return s, nil
}

// indexes are the n indexes the names of a new set take: 0..n-1, or, for
// this process's own sets, the lowest its other sets still open do not
// hold, so that one runner may hold several sets at once.
func indexes(ctx context.Context, pid, n int) ([]int, error) {
	used := map[int]bool{}
	if pid == os.Getpid() {
		names, err := Made(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range names {
			if m.PID == pid {
				used[m.index] = true
			}
		}
	}
	var out []int
	for i := 0; len(out) < n; i++ {
		if !used[i] {
			out = append(out, i)
		}
	}
	return out, nil
}

// add makes one host. On failure the caller removes what carries the host's
// names, unless the error is errNotMade: then the namespace of that name was
// there before, and is not this Set's to remove.
func add(ctx context.Context, h Host, bits int) error {
	host := func(args ...string) []string { return append([]string{"-n", h.Namespace}, args...) }
	steps := [][]string{
		{"netns", "add", h.Namespace},
		{"link", "add", h.Link, "type", "veth", "peer", "name", "eth0", "netns", h.Namespace},
		{"addr", "add", fmt.Sprintf("%s/%d", h.Gateway, bits), "dev", h.Link},
		{"link", "set", h.Link, "up"},
		host("addr", "add", fmt.Sprintf("%s/%d", h.Addr, bits), "dev", "eth0"),
		host("link", "set", "eth0", "up"),
		host("link", "set", "lo", "up"),
	}
	for i, args := range steps {
		if err := ip(ctx, args...); err != nil {
			if i == 0 {
				// The namespace was not made: it may be someone else's.
				return errors.Join(err, errNotMade)
			}
			return err
		}
	}
	return nil
}

// errNotMade marks a host whose namespace add did not create, so that the
// cleanup after a failed Start leaves alone a namespace of the same name.
var errNotMade = errors.New("hosts: namespace not made")

// Close removes every host of the set: its link, then its namespace. It is
// safe to call twice.
func (s *Set) Close() error {
	var errs []error
	for _, h := range s.hosts {
		errs = append(errs, remove(h))
	}
	s.hosts = nil
	return errors.Join(errs...)
}

// remove deletes a host's link and namespace, whichever exist. Deleting the
// root end of a veth pair deletes both ends at once; deleting a namespace
// alone lets the kernel destroy its links later, so the link goes first.
func remove(h Host) error {
	ctx := context.Background()
	var errs []error
	if exists(ctx, "link", h.Link) {
		errs = append(errs, ip(ctx, "link", "del", h.Link))
	}
	if exists(ctx, "netns", h.Namespace) {
		errs = append(errs, ip(ctx, "netns", "del", h.Namespace))
	}
	return errors.Join(errs...)
}

// Supported says whether Start can work here, and if not why, wrapping
// ErrUnsupported.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (uid %d)", ErrUnsupported, os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no ip command (iproute2): %v", ErrUnsupported, err)
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("%w: no network namespaces: %v", ErrUnsupported, err)
	}
	return nil
}

// Made lists the names of the namespaces and root-namespace links that carry
// Prefix, of any runner: what a leak check after Close expects to find none
// of, for its own PID.
func Made(ctx context.Context) ([]Name, error) {
	var names []Name
	out, err := ipOut(ctx, "netns", "list")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if n, ok := parseName(f[0], true); ok {
			names = append(names, n)
		}
	}
	out, err = ipOut(ctx, "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		link, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if n, ok := parseName(link, false); ok {
			names = append(names, n)
		}
	}
	return names, nil
}

// Name is a namespace or a link this package made, and the PID of the runner
// that made it.
type Name struct {
	Name      string
	PID       int
	Namespace bool // a namespace; otherwise a link of the root namespace
	index     int
}

// parseName reads "llh-PID-I" (a namespace) or "llhPIDvI" (a link).
func parseName(s string, namespace bool) (Name, bool) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return Name{}, false
	}
	sep := "v"
	if namespace {
		if rest, ok = strings.CutPrefix(rest, "-"); !ok {
			return Name{}, false
		}
		sep = "-"
	}
	pid, idx, ok := strings.Cut(rest, sep)
	if !ok {
		return Name{}, false
	}
	p, err := strconv.Atoi(pid)
	i, err2 := strconv.Atoi(idx)
	if err != nil || err2 != nil || p <= 0 {
		return Name{}, false
	}
	return Name{Name: s, PID: p, Namespace: namespace, index: i}, true
}

// Sweep removes the namespaces and links of runners whose PID is no longer
// alive, and returns what it removed. Those of live runners, this one
// included, are left alone.
func Sweep(ctx context.Context) ([]Name, error) {
	unlock, err := lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return sweep(ctx)
}

// sweep is Sweep with the lock held.
func sweep(ctx context.Context) ([]Name, error) {
	names, err := Made(ctx)
	if err != nil {
		return nil, err
	}
	var swept []Name
	var errs []error
	// Links first: see remove.
	for _, namespaces := range []bool{false, true} {
		for _, n := range names {
			if n.Namespace != namespaces || proc.Alive(n.PID) {
				continue
			}
			var err error
			if n.Namespace {
				err = ip(ctx, "netns", "del", n.Name)
			} else {
				err = ip(ctx, "link", "del", n.Name)
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			swept = append(swept, n)
		}
	}
	return swept, errors.Join(errs...)
}

// freeNets returns n /30s of within, skipping every /30 that holds an
// address of the root namespace.
func freeNets(ctx context.Context, within netip.Prefix, n int) ([]netip.Prefix, error) {
	out, err := ipOut(ctx, "-o", "-4", "addr", "show")
	if err != nil {
		return nil, err
	}
	var used []netip.Prefix
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" {
				continue
			}
			if p, err := netip.ParsePrefix(f[i+1]); err == nil {
				used = append(used, p)
			}
		}
	}
	return pickNets(within, used, n)
}

// pickNets returns the first n /30s of within that overlap none of used.
func pickNets(within netip.Prefix, used []netip.Prefix, n int) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for a := within.Masked().Addr(); within.Contains(a) && len(nets) < n; {
		p := netip.PrefixFrom(a, 30)
		free := true
		for _, u := range used {
			if u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			nets = append(nets, p)
		}
		for range 4 {
			a = a.Next()
		}
	}
	if len(nets) < n {
		return nil, fmt.Errorf("hosts: %s has %d free /30s, %d wanted", within, len(nets), n)
	}
	return nets, nil
}

// LockFile serialises Start and Sweep across the runners of one machine.
const LockFile = "/run/locklab-hosts.lock"

// lock takes LockFile (flock: the kernel releases it if the runner dies).
func lock() (unlock func(), err error) {
	f, err := os.OpenFile(LockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("hosts: lock %s: %w", LockFile, err)
	}
	return func() { f.Close() }, nil
}

func exists(ctx context.Context, kind, name string) bool {
	if kind == "netns" {
		_, err := os.Stat("/run/netns/" + name)
		return err == nil
	}
	return ip(ctx, "link", "show", name) == nil
}

func ip(ctx context.Context, args ...string) error {
	_, err := ipOut(ctx, args...)
	return err
}

// ipOut runs ip with args and returns its output; an error carries the
// command and what ip wrote to stderr.
func ipOut(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hosts: ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
