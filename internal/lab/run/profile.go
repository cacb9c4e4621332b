package run

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/lab/plan"
)

// isProfileRun reports whether -profile names this run, by its number or id.
func isProfileRun(want string, spec plan.Spec) bool {
	if want == "" {
		return false
	}
	if n, err := strconv.Atoi(want); err == nil {
		return n == spec.Index
	}
	return want == spec.ID
}

// freeLoopbackAddr finds a free loopback port for the server's metrics
// listener (-metrics-addr has no port-0 report to parse).
func freeLoopbackAddr() (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer lis.Close()
	return lis.Addr().String(), nil
}

// profiler fetches a CPU profile and a runtime trace of the server from its
// /debug/pprof endpoint (-metrics-addr), both over the measured window, and
// saves them beside the run's record.
type profiler struct {
	done   chan error // one result per fetch
	files  []string
	waited bool
	names  []string
	err    error
}

func startProfile(ctx context.Context, addr string, window time.Duration, prefix string) *profiler {
	p := &profiler{done: make(chan error, 2)}
	secs := max(1, int(window.Seconds()))
	fetches := []struct{ url, file string }{
		{fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), prefix + ".cpu.pprof"},
		{fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%g", addr, window.Seconds()), prefix + ".trace"},
	}
	for _, f := range fetches {
		p.files = append(p.files, f.file)
		go func() { p.done <- fetchTo(ctx, f.url, f.file) }() // joined by wait
	}
	return p
}

// wait returns the saved files' base names once both fetches have ended;
// called again, it returns the same.
func (p *profiler) wait() ([]string, error) {
	if p.waited {
		return p.names, p.err
	}
	p.waited = true
	p.names, p.err = p.collect()
	return p.names, p.err
}

func (p *profiler) collect() ([]string, error) {
	var errs []string
	for range 2 {
		if err := <-p.done; err != nil {
			errs = append(errs, err.Error())
		}
	}
	var names []string
	for _, f := range p.files {
		if _, err := os.Stat(f); err == nil {
			names = append(names, f[strings.LastIndexByte(f, '/')+1:])
		}
	}
	if len(errs) > 0 {
		return names, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return names, nil
}

func fetchTo(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
