package run

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/lab/plan"
)

func TestProfileSavesBesideTheRun(t *testing.T) {
	var (
		mu    sync.Mutex // protects asked: the two fetches run at once
		asked []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		switch r.URL.Path {
		case "/debug/pprof/profile":
			w.Write([]byte("pprof bytes"))
		case "/debug/pprof/trace":
			w.Write([]byte("trace bytes"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	prefix := filepath.Join(t.TempDir(), "007-counter-go-inputQ-vus100-rep1")
	p := startProfile(t.Context(), addr, 2*time.Second, prefix)
	files, err := p.wait()
	require.NoError(t, err)
	assert.Equal(t, []string{"007-counter-go-inputQ-vus100-rep1.cpu.pprof", "007-counter-go-inputQ-vus100-rep1.trace"}, files)
	b, err := os.ReadFile(prefix + ".cpu.pprof")
	require.NoError(t, err)
	assert.Equal(t, "pprof bytes", string(b))
	mu.Lock()
	assert.ElementsMatch(t, []string{"/debug/pprof/profile?seconds=2", "/debug/pprof/trace?seconds=2"}, asked)
	mu.Unlock()
	again, err := p.wait()
	assert.NoError(t, err)
	assert.Equal(t, files, again, "a second wait returns the same")

	// The control: a server without pprof fails the profile, and says where.
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	_, err = startProfile(t.Context(), strings.TrimPrefix(bare.URL, "http://"), time.Second, prefix+"-bare").wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")

	for want, spec := range map[bool]plan.Spec{true: {Index: 7, ID: "007-x"}, false: {Index: 8, ID: "008-x"}} {
		assert.Equal(t, want, isProfileRun("7", spec))
	}
	assert.True(t, isProfileRun("007-x", plan.Spec{Index: 7, ID: "007-x"}))
	assert.False(t, isProfileRun("", plan.Spec{Index: 7, ID: "007-x"}))
}
