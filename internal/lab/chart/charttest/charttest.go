// Package charttest opens pictures in a real headless Chromium, with the
// network cut off, for the browser tests of the packages that draw them
// (build tag browser; `make browser-test`). A picture a repository
// browser or report.html would show broken fails there, where a check of
// the SVG's text alone would pass.
package charttest

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

	"github.com/stretchr/testify/require"
)

// Chromium finds the browser; the test fails, not skips, without one.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: run `make deb-chromium` (installs Debian's chromium)")
	return ""
}

// args are the flags of every run of the browser: headless, every fetch
// to a dead proxy (a file that needed the network would show broken
// images), a profile of its own in dir.
func args(dir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
}

// Run opens file in headless Chromium with extra after the common flags,
// a profile in dir, and returns what it printed.
func Run(t testing.TB, dir, file string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Chromium(t), append(append(args(dir), extra...), "file://"+file)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), "chromium: %s%s", out.String(), errs.String())
	return out.Bytes()
}

// Screenshot renders content, as a file of that name, in a window of size
// ("width,height"), and decodes the PNG.
func Screenshot(t testing.TB, name string, content []byte, size string) image.Image {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(file, content, 0o644))
	shot := filepath.Join(dir, "shot.png")
	Run(t, dir, file, "--hide-scrollbars", "--window-size="+size, "--screenshot="+shot)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

var svgText = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// SVGTexts opens an SVG document, as a file of that name, in Chromium on
// its own, requires that Chromium read it whole as SVG, and returns the
// text of its text elements.
func SVGTexts(t testing.TB, name string, svg []byte) []string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(file, svg, 0o644))
	dom := string(Run(t, dir, file, "--dump-dom"))
	require.Contains(t, dom, "<svg", "Chromium read it as SVG")
	require.NotContains(t, dom, "parsererror", "and parsed it whole")
	var got []string
	for _, m := range svgText.FindAllStringSubmatch(dom, -1) {
		got = append(got, html.UnescapeString(m[1]))
	}
	return got
}

// ColouredRows counts pixel rows that hold a strongly coloured pixel. The
// charts' axes, grids and text are greys, and so are report.html's own
// styles, so colour comes from the lines, points and legends.
func ColouredRows(img image.Image) int {
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
