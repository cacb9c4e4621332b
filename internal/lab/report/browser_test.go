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
	"html"
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

// chromiumArgs are the flags of every run of the browser: headless, every
// fetch to a dead proxy (a file that needed the network would show broken
// images), a profile of its own in dir.
func chromiumArgs(dir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
}

// runChromium opens file in headless Chromium with args after the common
// ones and returns what it printed.
func runChromium(t *testing.T, dir, file string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t), append(append(chromiumArgs(dir), args...), "file://"+file)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), "chromium: %s%s", out.String(), errs.String())
	return out.Bytes()
}

// screenshot renders page in headless Chromium and decodes the PNG.
func screenshot(t *testing.T, page string) image.Image {
	return screenshotFile(t, "report.html", []byte(page), "1400,5000")
}

// screenshotFile renders content, as a file of that name, in a window of
// size ("width,height"), and decodes the PNG.
func screenshotFile(t *testing.T, name string, content []byte, size string) image.Image {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(file, content, 0o644))
	shot := filepath.Join(dir, "shot.png")
	runChromium(t, dir, file, "--hide-scrollbars", "--window-size="+size, "--screenshot="+shot)
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

// TestForestSVGRendersInBrowser opens a forest.svg, as report.md links it,
// in Chromium on its own: the document parses as SVG, holds the title and
// every row's label as text, and draws its coloured points and bars. The
// control: the same plot with every row withheld draws no colour.
func TestForestSVGRendersInBrowser(t *testing.T) {
	rep := forestReport()
	svg, err := rep.Forest()
	require.NoError(t, err)

	dir := t.TempDir()
	file := filepath.Join(dir, ForestFile)
	require.NoError(t, os.WriteFile(file, svg, 0o644))
	dom := string(runChromium(t, dir, file, "--dump-dom"))
	require.Contains(t, dom, "<svg", "Chromium read it as SVG")
	assert.NotContains(t, dom, "parsererror", "and parsed it whole")
	texts := regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(dom, -1)
	var got []string
	for _, m := range texts {
		got = append(got, html.UnescapeString(m[1]))
	}
	assert.Contains(t, got, rep.forestTitle())
	for _, f := range rep.forestRows() {
		assert.Contains(t, got, rep.forestLabel(f))
	}

	drawn := colouredRows(screenshotFile(t, ForestFile, svg, "1200,400"))
	for i := range rep.Findings {
		rep.Findings[i].Withheld = "withheld for the control"
	}
	blank, err := rep.Forest()
	require.NoError(t, err)
	none := colouredRows(screenshotFile(t, ForestFile, blank, "1200,400"))
	assert.Zero(t, none, "a plot with nothing drawn on it has no colour")
	// Six rows with an interval, each a point and its bar about seven
	// pixel rows tall at this size (41 rows when written): half of that is
	// the floor.
	assert.Greater(t, drawn, 20, "the points and their intervals are drawn in colour")
}
