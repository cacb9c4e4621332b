// Package pack packs a finished study's raw runs into one archive beside
// its report. The runner writes runs/ — one record per run, its logs and
// profiles, each on disk as soon as its run ends — and a study folder kept
// for readers (docs/results) then holds thousands of small files; packed,
// it holds runs.tar.gz (record.RunsArchive) instead, which every reader of
// a results folder reads in its place (record.Open).
//
// Pack is careful in this order: it reads runs/ and a logs.tar.gz an older
// layout kept beside it, writes the archive to a temporary file, reads that
// back, renders the study's report from it and from runs/, and only when
// the two renderings are the same bytes, the loaders read the same records
// from both and the archive holds every file it packed but the CPU profiles
// of attributed runs (whose figures are in their records) and the drivers'
// summaries their records hold whole, puts the archive in place and
// removes what it packed. The archive is in the smaller layout
// (record.ArchiveSchema, compact): the logs in one file, and no histogram
// that no report reads; the records read the same but for those. (Runs that make no comparison report,
// such as a seed's counted runs, are checked by their records alone, and
// Pack says so.) The archive is deterministic: the same files give the same
// bytes.
package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/capacity"
	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/render"
	"github.com/locklab/locklab/internal/lab/report"
)

// LogsArchive is where studies kept their logs beside runs/ before
// RunsArchive held both: flat, a file per log.
const LogsArchive = "logs.tar.gz"

// ErrDiffers is returned when the archive would not read back as runs/
// did: nothing is removed.
var ErrDiffers = errors.New("pack: the archive does not read back as runs/")

// Pack packs the results folder dir and reports what it did to out.
func Pack(dir string, out io.Writer) error {
	runsDir := filepath.Join(dir, record.RunsDir)
	st, err := os.Stat(runsDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, aerr := os.Stat(filepath.Join(dir, record.RunsArchive)); aerr == nil {
			// Packed already: an archive from before records kept their
			// histogram once is rewritten so that they do.
			return Repack(dir, out)
		}
		return fmt.Errorf("%s has no %s/ to pack", dir, record.RunsDir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", runsDir)
	}
	files, err := gather(dir)
	if err != nil {
		return err
	}
	var size int64
	for _, b := range files {
		size += int64(len(b))
	}
	c, err := compact(os.DirFS(dir), files)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	tmps, remove, err := writeTemps(dir, c.files)
	defer remove()
	if err != nil {
		return err
	}
	checked, notes, err := verify(dir, tmps, files, c)
	if err != nil {
		return err
	}
	packedSize, names, err := install(dir, tmps)
	if err != nil {
		return err
	}
	// runs/ goes first: were Pack stopped between the two, the logs would
	// still be beside an archive that holds them, never lost.
	if err := os.RemoveAll(runsDir); err != nil {
		return err
	}
	removed := record.RunsDir + "/"
	if err := os.Remove(filepath.Join(dir, LogsArchive)); err == nil {
		removed += " and " + LogsArchive
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fmt.Fprintf(out, "pack: %s: %d files (%s) → %s (%s): %s; %s; removed %s\n",
		dir, len(files), megabytes(size), names, megabytes(packedSize), c, checked, removed)
	for _, s := range notes {
		fmt.Fprintf(out, "pack: note: %s\n", s)
	}
	return nil
}

// gather reads every file under dir's runs/, and those of its logs.tar.gz,
// by their names in the archive (runs/<name>). A log that is also in runs/
// must have the same bytes there.
func gather(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	root := os.DirFS(dir)
	err := fs.WalkDir(root, record.RunsDir, func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is neither a file nor a folder: pack only files", filepath.Join(dir, name))
		}
		files[name], err = fs.ReadFile(root, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	logsFile := filepath.Join(dir, LogsArchive)
	if _, err := os.Stat(logsFile); errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	logs, err := record.ReadArchive(logsFile)
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(logs, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(logs, name)
		if err != nil {
			return err
		}
		to := path.Join(record.RunsDir, name)
		if have, ok := files[to]; ok && !bytes.Equal(have, b) {
			return fmt.Errorf("%s's %s is not %s: which is right?", logsFile, name, filepath.Join(dir, to))
		}
		files[to] = b
		return nil
	})
	return files, err
}

// verify reads the archive back and checks it against what was packed:
// every file, byte for byte, as compact laid them out (c), the tree it
// gives back against runs/ (files) but for the histograms compact dropped
// and the profiles and summaries it left out,
// what the loaders read of it, and the report rendered from it against the
// one rendered from runs/; checked says which. Its notes name the report
// files in the folder that differ from that rendering (made by other
// code), which is no reason to stop: the archive holds the same runs
// either way.
func verify(dir string, volumes []string, files map[string][]byte, c compacted) (checked string, notes []string, err error) {
	raw, err := record.ReadVolumes(volumes)
	if err != nil {
		return "", nil, err
	}
	if err := sameTree(raw, c.files); err != nil {
		return "", nil, err
	}
	got, err := unbundledTree(c.files)
	if err != nil {
		return "", nil, err
	}
	kept := make(map[string][]byte, len(files))
	for name, b := range files {
		if !c.profiles[name] && !c.summaries[name] {
			kept[name] = b
		}
	}
	if err := sameTreeBut(got, kept, c.changed); err != nil {
		return "", nil, err
	}
	root := os.DirFS(dir)
	packedDir := record.Packed(root, got)
	fromDir, renderErr := render.Render(root)
	if renderErr == nil {
		fromArchive, err := render.Render(packedDir)
		if err != nil {
			return "", nil, fmt.Errorf("%w: its report renders from %s/ but not from it (%v); %s/ is kept", ErrDiffers, record.RunsDir, err, record.RunsDir)
		}
		if d := sameFiles(fromDir, fromArchive); d != "" {
			return "", nil, fmt.Errorf("%w: its report is not the one %s/ renders (%s); %s/ is kept", ErrDiffers, record.RunsDir, d, record.RunsDir)
		}
	}
	recsDir, err := records(root, c.dropped)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", dir, err)
	}
	recsArchive, err := records(packedDir, c.dropped)
	if err != nil || !bytes.Equal(recsDir, recsArchive) {
		return "", nil, fmt.Errorf("%w: its records do not read as %s/'s (%v); %s/ is kept", ErrDiffers, record.RunsDir, err, record.RunsDir)
	}
	if renderErr != nil {
		// A seed's counted runs (ghz's bank and rpcx) are no comparison:
		// its page is cmd/seeds', from the records compared above.
		return "its records read the same from it as from " + record.RunsDir + "/",
			[]string{fmt.Sprintf("%s: its runs make no report (%v): their records were compared instead", dir, renderErr)}, nil
	}
	for _, f := range fromDir {
		b, err := fs.ReadFile(root, f.Name)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: no %s in the folder", dir, f.Name))
			continue
		}
		if d := sameFiles([]report.File{f}, []report.File{{Name: f.Name, Data: b}}); d != "" {
			notes = append(notes, fmt.Sprintf("%s: the %s in the folder is not what this code renders (%s): -rerender %s renders it again", dir, f.Name, d, dir))
		}
	}
	return "its report renders the same from it as from " + record.RunsDir + "/", notes, nil
}

// sameTree checks that an archive read back holds the files packed, byte
// for byte, and no other.
func sameTree(got fs.FS, files map[string][]byte) error {
	n := 0
	err := fs.WalkDir(got, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(got, name)
		if want, ok := files[name]; err != nil || !ok || !bytes.Equal(b, want) {
			return fmt.Errorf("%w: %s is not the file packed", ErrDiffers, name)
		}
		return nil
	})
	if err == nil && n != len(files) {
		err = fmt.Errorf("%w: it holds %d files, %d were packed", ErrDiffers, n, len(files))
	}
	return err
}

// unbundledTree is the tree an archive of files reads as
// (record.Unbundle): what record.Open gives its readers.
func unbundledTree(files map[string][]byte) (fs.FS, error) {
	tree, err := record.Unbundle(files)
	if err != nil {
		return nil, err
	}
	return record.MemFS(tree)
}

// sameTreeBut is sameTree but for the files in but, records compact
// rewrote: they must be there, but their bytes differ (records checks
// that they read the same, but for the histograms dropped).
func sameTreeBut(got fs.FS, files map[string][]byte, but map[string]bool) error {
	want := make(map[string][]byte, len(files))
	for name, b := range files {
		want[name] = b
		if but[name] {
			if b, err := fs.ReadFile(got, name); err == nil {
				want[name] = b
			}
		}
	}
	return sameTree(got, want)
}

// records is everything the loaders read of a results folder, as JSON,
// but the latency histograms of the runs in blank (and the curve drawn from
// each, and the mark of one dropped) and the names of CPU profiles: what an
// archive that dropped them must still read as.
func records(folder fs.FS, blank map[string]bool) ([]byte, error) {
	meta, runs, err := record.LoadFolder(folder)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.Attribution != nil {
			// An archive keeps no profile (compact): the figures folded
			// from it are compared below, not the file's name.
			a := *r.Attribution
			a.Profile = ""
			r.Attribution = &a
		}
		if blank[r.ID] && r.Result != nil {
			res := *r.Result
			res.HDR, res.Percentiles = "", nil
			r.Result, r.HistogramDropped = &res, ""
		}
	}
	c, _, err := capacity.LoadCapacity(folder)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Meta     record.Meta
		Runs     []*record.Run
		Capacity *capacity.Capacity
	}{meta, runs, c})
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
