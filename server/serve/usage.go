package serve

import (
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/locklab/locklab/server"
)

// PrintUsage writes the head of -help: the synopsis and every mode with its
// doc and the workloads it does not serve, from the registry. The flags'
// own list follows it (flag.FlagSet.PrintDefaults).
func PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: locklab -mode MODE [flags]\n\nmodes:\n")
	for _, m := range server.Modes() {
		fmt.Fprintf(w, "  %-15s %s\n", m.Name, m.Doc)
		if d, ok := m.Design(); ok {
			var unserved []string
			for _, wl := range server.Workloads() {
				if !m.Serves(wl) {
					unserved = append(unserved, wl)
				}
			}
			if len(unserved) > 0 {
				fmt.Fprintf(w, "  %-15s (serves no %s: needs %s)\n", "", strings.Join(unserved, ", "), d.Needs)
			}
		}
	}
	for _, b := range server.Backends()[1:] {
		fmt.Fprintf(w, "\nwith -backend %s (the bank in a database), the modes: %s\n", b, strings.Join(server.ModesOn(b), ", "))
	}
	fmt.Fprintf(w, "\nflags:\n")
}

// ListModes writes -list-modes: every mode that can run with the durability
// and the backend given, one per line with the workloads it serves, for
// scripts to range over.
func ListModes(w io.Writer, durability, backend string) {
	for _, m := range server.Modes() {
		if m.CanRun(durability) != nil || m.CanServeOn(backend, durability) != nil {
			continue // the list answers "what can run with these flags"
		}
		line := []string{m.Name}
		for _, wl := range server.Workloads() {
			if m.ServesOn(wl, backend) {
				line = append(line, wl)
			}
		}
		fmt.Fprintln(w, strings.Join(line, " "))
	}
}

// Version describes the build from what the Go toolchain recorded in it:
// the module version ("(devel)" for a build from a checkout), the VCS
// revision and time when the build stamped them (not with -buildvcs=false),
// and the Go version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "locklab (no build information)"
	}
	v := "locklab " + bi.Main.Version
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += " " + rev
		if modified == "true" {
			v += "+dirty"
		}
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
}

// loopbackIfBare turns a bare port ("9090" or ":9090") into 127.0.0.1:port,
// so that the metrics and profiles are not served beyond this machine unless
// a host is named ("0.0.0.0:9090").
func loopbackIfBare(addr string) (string, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q: want a number 0..65535", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
