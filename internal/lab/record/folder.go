package record

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Open opens a results folder for reading, as one fs.FS: meta.json and the
// other files beside the report, and runs/ — the folder the runner writes,
// or, once the study is packed, RunsArchive's tree (with its other volumes,
// Volumes), read into memory. Every
// loader of this package reads such an fs.FS, so that a packed folder reads
// as the runner left it, with no extraction by hand. A folder holding both
// runs/ and the archive is refused: one of them is stale.
func Open(dir string) (fs.FS, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a results folder", dir)
	}
	root := os.DirFS(dir)
	volumes, err := Volumes(dir)
	if err != nil {
		return nil, err
	}
	if len(volumes) == 0 {
		return extracted(root)
	}
	if _, err := os.Stat(filepath.Join(dir, RunsDir)); err == nil {
		return nil, fmt.Errorf("%s holds both %s/ and %s: one of them is stale; remove it (packing runs/ again replaces the archive)", dir, RunsDir, RunsArchive)
	}
	runs, err := ReadVolumes(volumes)
	if err != nil {
		return nil, err
	}
	if err := onlyRuns(runs); err != nil {
		return nil, fmt.Errorf("%s: %w", volumes[0], err)
	}
	if runs, err = unbundled(runs); err != nil {
		return nil, fmt.Errorf("%s: %w", volumes[0], err)
	}
	return Packed(root, runs), nil
}

// extracted is a folder read from its runs/: as it is, or, where runs/ was
// extracted from an archive of the smaller layout (ManifestFile), with its
// logs put back, as Open reads the archive itself.
func extracted(root fs.FS) (fs.FS, error) {
	if _, err := fs.Stat(root, manifestPath); err != nil {
		return root, nil
	}
	sub, err := fs.Sub(root, RunsDir)
	if err != nil {
		return nil, err
	}
	files, err := Files(sub)
	if err != nil {
		return nil, err
	}
	inRuns := make(map[string][]byte, len(files))
	for name, b := range files {
		inRuns[path.Join(RunsDir, name)] = b
	}
	runs, err := MemFS(inRuns)
	if err != nil {
		return nil, err
	}
	if runs, err = unbundled(runs); err != nil {
		return nil, fmt.Errorf("%s: %w", RunsDir, err)
	}
	return Packed(root, runs), nil
}

// onlyRuns checks that an archive holds runs/ and nothing beside it.
func onlyRuns(runs fs.FS) error {
	top, err := fs.ReadDir(runs, ".")
	if err != nil {
		return err
	}
	for _, e := range top {
		if e.Name() != RunsDir || !e.IsDir() {
			return fmt.Errorf("%w: %q is outside %s/", ErrBadArchive, e.Name(), RunsDir)
		}
	}
	return nil
}

// Packed is a results folder whose runs/ is an archive's: dir's files, but
// runs/ and everything under it from runs, which holds the tree as
// WriteArchive wrote it.
func Packed(dir, runs fs.FS) fs.FS { return packed{dir: dir, runs: runs} }

type packed struct{ dir, runs fs.FS }

var (
	_ fs.ReadFileFS = packed{}
	_ fs.ReadDirFS  = packed{}
)

func inRuns(name string) bool { return name == RunsDir || strings.HasPrefix(name, RunsDir+"/") }

func (p packed) Open(name string) (fs.File, error) {
	switch {
	case inRuns(name):
		return p.runs.Open(name)
	case name != ".":
		return p.dir.Open(name)
	}
	f, err := p.dir.Open(name)
	if err != nil {
		return nil, err
	}
	entries, err := p.ReadDir(name)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &listed{File: f, entries: entries}, nil
}

// listed is the folder's root, listed as packed.ReadDir lists it.
type listed struct {
	fs.File
	entries []fs.DirEntry
	off     int
}

func (l *listed) ReadDir(count int) ([]fs.DirEntry, error) { return readDir(l.entries, &l.off, count) }

func (p packed) ReadFile(name string) ([]byte, error) {
	if inRuns(name) {
		return fs.ReadFile(p.runs, name)
	}
	return fs.ReadFile(p.dir, name)
}

// ReadDir lists runs/ from the archive, and the folder's own files beside
// it: the archive's runs/ is listed at the top as the directory would be.
func (p packed) ReadDir(name string) ([]fs.DirEntry, error) {
	if inRuns(name) {
		return fs.ReadDir(p.runs, name)
	}
	entries, err := fs.ReadDir(p.dir, name)
	if err != nil || name != "." {
		return entries, err
	}
	st, err := fs.Stat(p.runs, RunsDir)
	if err != nil {
		return entries, nil // an archive with no runs/: nothing to add
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return e.Name() == RunsDir })
	entries = append(entries, fs.FileInfoToDirEntry(st))
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}
