package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/locklab/locklab/internal/lab/plan"
	locklabv1 "github.com/locklab/locklab/proto/locklab/v1"
	"github.com/locklab/locklab/summary"
)

// TestLoadInRunOrder: a cell the validity gate ran again repeats its runs'
// indexes after the runs that followed them; Load gives the order the runs
// started in, as the runner had them, whatever order the file names sort
// in ("-try2" sorts before ".json").
func TestLoadInRunOrder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "runs"), 0o755))
	stats, err := protojson.Marshal(&locklabv1.GetStatsResponse{WindowSeconds: 1, CpuSeconds: 0.5, Requests: 100})
	require.NoError(t, err)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ran := []struct {
		id           string
		index, tries int
	}{{"001-a", 1, 1}, {"002-b", 2, 1}, {"001-a-try2", 1, 2}, {"002-b-try2", 2, 2}, {"003-c", 3, 1}}
	for i, r := range ran {
		rec := Run{Spec: plan.Spec{ID: r.id, Index: r.index, Attempt: r.tries}, Started: t0.Add(time.Duration(i) * time.Second),
			Result: &summary.Summary{Calls: 100, DurationS: 1}, Stats: stats,
			ServerProc: ProcUsage{CPUs: []int{0}, CPUSeconds: 0.5, WallSeconds: 1}, DriverProc: ProcUsage{CPUs: []int{1}, CPUSeconds: 0.2, WallSeconds: 1}}
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", r.id+".json"), b, 0o644))
	}
	runs, err := Load(os.DirFS(dir))
	require.NoError(t, err)
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	assert.Equal(t, []string{"001-a", "002-b", "001-a-try2", "002-b-try2", "003-c"}, got)
}
