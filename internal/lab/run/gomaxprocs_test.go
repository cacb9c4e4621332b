package run

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
	"github.com/locklab/locklab/summary"
)

// envDriver is a driver whose process prints the GOMAXPROCS it was given.
type envDriver struct{ goDriver }

func (envDriver) Command(Config, Job) ([]string, []string, error) {
	return []string{"sh", "-c", `echo "driver GOMAXPROCS=$GOMAXPROCS"`}, nil, nil
}

func (envDriver) Result(Config, Job) (*summary.Summary, error) {
	return &summary.Summary{Schema: summary.Schema, DurationS: 1}, nil
}

// TestEveryProcessGetsGOMAXPROCS starts a real server process and a real
// driver process, pinned and unpinned: each is given GOMAXPROCS — its
// CPUs, or the machine's when unpinned, never the runtime's own default —
// and the run's record says what each was given.
func TestEveryProcessGetsGOMAXPROCS(t *testing.T) {
	srvScript := filepath.Join(t.TempDir(), "server")
	require.NoError(t, os.WriteFile(srvScript, []byte("#!/bin/sh\n"+
		`echo "locklab: mode=mutex listening on 127.0.0.1:1 GOMAXPROCS=$GOMAXPROCS" >&2`+"\nexec sleep 60\n"), 0o755))
	tests := []struct {
		name       string
		server     []int
		driver     []int
		wantServer int
		wantDriver int
	}{
		{"pinned", []int{0}, []int{0}, 1, 1},
		{"unpinned", nil, nil, 5, 5}, // the machine's CPUs, as NumCPU says
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{NumCPU: 5}
			dir := t.TempDir()
			srv, err := startServer(srvScript, nil, tt.server, cfg.gomaxprocs(tt.server), filepath.Join(dir, "server.log"))
			require.NoError(t, err)
			srv.stop()
			log, err := os.ReadFile(filepath.Join(dir, "server.log"))
			require.NoError(t, err)
			assert.Contains(t, string(log), "GOMAXPROCS="+strconv.Itoa(tt.wantServer)+"\n")

			job := Job{Spec: plan.Spec{Driver: "go"}, Place: plan.Placement{Server: tt.server, Driver: tt.driver}, Log: filepath.Join(dir, "driver.log")}
			_, run, err := runDriver(t.Context(), cfg, envDriver{}, job, 0)
			require.NoError(t, err)
			log, err = os.ReadFile(job.Log)
			require.NoError(t, err)
			assert.Equal(t, "driver GOMAXPROCS="+strconv.Itoa(tt.wantDriver)+"\n", string(log))
			assert.Equal(t, tt.wantServer, run.Server.GOMAXPROCS, "the record has the server's")
			assert.Equal(t, tt.wantDriver, run.Driver.GOMAXPROCS, "and the driver's")
		})
	}
}
