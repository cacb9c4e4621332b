package run

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/report"
)

// ErrPackDiffers: a side-by-side folder's packed rounds would not render
// the report its plain rounds render; nothing is changed.
var ErrPackDiffers = errors.New("pack: the packed rounds do not render the same report")

// PackDuet packs a finished side-by-side results folder kept for readers:
// its rounds.jsonl becomes rounds.jsonl.gz (DuetRoundsPacked), a sixth of
// its size, once the report and its figure rendered from each, in folders
// of their own, are the same bytes; only then is the packed file put in
// place and the plain one removed. The gzip stream has no name and no
// time, so the same rounds give the same bytes. A folder packed already
// is left as it is.
func PackDuet(dir string, out io.Writer) error {
	plain := filepath.Join(dir, DuetRoundsFile)
	raw, err := os.ReadFile(plain)
	if errors.Is(err, fs.ErrNotExist) {
		if _, perr := os.Stat(filepath.Join(dir, DuetRoundsPacked)); perr == nil {
			fmt.Fprintf(out, "pack: %s: packed already (%s)\n", dir, DuetRoundsPacked)
			return nil
		}
	}
	if err != nil {
		return err
	}
	var packed bytes.Buffer
	zw, err := gzip.NewWriterLevel(&packed, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	meta, err := os.ReadFile(filepath.Join(dir, DuetMetaFile))
	if err != nil {
		return err
	}
	render := func(name string, rounds []byte) (map[string][]byte, error) {
		tmp, err := os.MkdirTemp("", "locklab-pack-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := os.WriteFile(filepath.Join(tmp, DuetMetaFile), meta, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), rounds, 0o644); err != nil {
			return nil, err
		}
		if err := WriteDuetReport(tmp, io.Discard); err != nil {
			return nil, err
		}
		got := map[string][]byte{}
		for _, f := range []string{"report.md", report.ForestFile} {
			b, err := os.ReadFile(filepath.Join(tmp, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			got[f] = b
		}
		return got, nil
	}
	want, err := render(DuetRoundsFile, raw)
	if err != nil {
		return fmt.Errorf("pack: %s: %w", dir, err)
	}
	got, err := render(DuetRoundsPacked, packed.Bytes())
	if err != nil {
		return fmt.Errorf("pack: %s, packed: %w", dir, err)
	}
	if len(got) != len(want) {
		return fmt.Errorf("%w: %s renders %d files from its rounds, %d packed", ErrPackDiffers, dir, len(want), len(got))
	}
	for f, b := range want {
		if !bytes.Equal(got[f], b) {
			return fmt.Errorf("%w: %s: %s", ErrPackDiffers, dir, f)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, DuetRoundsPacked), packed.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Remove(plain); err != nil {
		return err
	}
	fmt.Fprintf(out, "pack: %s: %s (%d bytes) → %s (%d bytes), the report rendered the same from both\n",
		dir, DuetRoundsFile, len(raw), DuetRoundsPacked, packed.Len())
	return nil
}
