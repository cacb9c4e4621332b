//go:build browser

// The browser test opens report.html in a real headless Chromium with the
// network cut off and checks that the charts are drawn. It needs Chromium
// (`make deb-chromium` installs Debian's), so it has its own build tag and its own
// make target, `make browser-test`; `make test` runs it inside its race tests
// (-tags=browser, scripts/test.sh). Plain `go test ./...` works without a browser.

package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds the browser; the test fails, not skips, without one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: run `make deb-chromium` (installs Debian's chromium)")
	return ""
}

// screenshot renders page in headless Chromium and decodes the PNG. Every
// fetch goes to a dead proxy, so a page that needed the network would show
// broken images.
func screenshot(t *testing.T, page string) image.Image {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o644))
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t),
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--hide-scrollbars", "--window-size=1400,5000", "--screenshot="+shot,
		"file://"+file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "chromium: %s", out.String())
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// colouredRows counts pixel rows that hold a strongly coloured pixel. The
// page's own styles are greys only, so colour comes from the charts' lines,
// points and legends (one colour per mode).
func colouredRows(img image.Image) int {
	rows := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 80 {
				rows++
				break
			}
		}
	}
	return rows
}

func TestReportHTMLDrawsChartsInBrowserOffline(t *testing.T) {
	rep := mustNew(t, fakeMeta(), fakeRuns(t))
	page, err := rep.HTML()
	require.NoError(t, err)

	drawn := colouredRows(screenshot(t, page))

	// The control: the same page with its chart data broken shows only
	// Chromium's small broken-image icons (a few coloured rows each), or the
	// count above would not prove the charts were drawn.
	broken := regexp.MustCompile(`data:image/svg&#43;xml;base64,[A-Za-z0-9&#;/=]+`).
		ReplaceAllString(page, "data:image/svg+xml;base64,AAAA")
	require.NotEqual(t, page, broken)
	none := colouredRows(screenshot(t, broken))

	// Seven charts of 9 cm each, two to a row at this width: several hundred
	// pixel rows carry their coloured lines and legends.
	assert.Less(t, none, 80, "a page whose charts cannot be decoded shows almost no colour")
	assert.Greater(t, drawn, 300, "the charts are drawn with their coloured lines")
}
