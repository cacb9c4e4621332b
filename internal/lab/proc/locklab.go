package proc

import (
	"fmt"
	"os/exec"
	"regexp"
	"time"
)

// listenLine is the line a locklab server prints once it listens
// (server/serve.Run).
var listenLine = regexp.MustCompile(`locklab: mode=(\S+) listening on (\S+)`)

// ServerStartTimeout bounds how long a locklab server may take to listen.
const ServerStartTimeout = 20 * time.Second

// Server is a running locklab server.
type Server struct {
	*Proc
	// Mode and Addr are what the server printed once it listened.
	Mode, Addr string
}

// StartServer starts a locklab server (cmd runs the binary, with -addr
// giving port 0 or a port of its own) and waits until it listens.
func StartServer(cmd *exec.Cmd) (*Server, error) {
	p, err := Start(cmd)
	if err != nil {
		return nil, err
	}
	return AwaitServer(p)
}

// AwaitServer waits until p, a locklab server started with Start, listens;
// it stops p if it does not. For a caller that does something to the
// process (puts it in a cgroup) between its start and its listening.
func AwaitServer(p *Proc) (*Server, error) {
	m, err := p.WaitLine(listenLine, ServerStartTimeout)
	if err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Server{Proc: p, Mode: m[1], Addr: m[2]}, nil
}

// Build builds the locklab server (the module's root package) into dir and
// returns the binary's path: for tests that start real servers.
func Build(dir string) (string, error) {
	bin := dir + "/locklab"
	cmd := exec.Command("go", "build", "-o", bin, "github.com/locklab/locklab")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("proc: go build locklab: %w: %s", err, out)
	}
	return bin, nil
}
