package record

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"time"
)

// A finished study's raw runs can be packed into one archive beside its
// report: RunsArchive holds the tree the runner wrote as RunsDir (records,
// logs, profiles), each entry named as it was, runs/<id>.json. The runner
// itself always writes the directory: a record is on disk as soon as its run
// ends, and a reader can tail it.
const (
	RunsDir     = "runs"
	RunsArchive = "runs.tar.gz"
)

// ReadArchive reads a gzipped tar archive into memory as a read-only
// fs.FS. It reads the whole archive before it answers, so that a corrupt or
// truncated file is refused at once, with its path, and never half read.
func ReadArchive(file string) (fs.FS, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fsys, err := readArchive(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return fsys, nil
}

// ErrBadArchive marks an archive that is not a whole gzipped tar of files.
var ErrBadArchive = errors.New("not a whole gzipped tar archive of files")

func readArchive(r io.Reader) (*memFS, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	m := newMemFS()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v (truncated or corrupt)", ErrBadArchive, err)
		}
		name := path.Clean(h.Name)
		if name == "." && h.Typeflag == tar.TypeDir { // the root, as `tar -C DIR .` writes it
			continue
		}
		if !fs.ValidPath(name) || name == "." {
			return nil, fmt.Errorf("%w: entry %q is not a path inside it", ErrBadArchive, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = m.addDir(name)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("%w: entry %q: %v (truncated or corrupt)", ErrBadArchive, h.Name, err)
			}
			err = m.addFile(name, b)
		default:
			err = fmt.Errorf("entry %q is neither a file nor a folder", h.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
	}
	// The tar ends before the gzip stream does: read on to its checksum.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("%w: %v (truncated or corrupt)", ErrBadArchive, err)
	}
	return m, nil
}

// WriteArchive writes every file and folder of fsys as a gzipped tar, the
// same bytes for the same files: entries in lexical order, no times, owners
// or modes of the machine's (files 0644, folders 0755), and a gzip header
// with neither name nor time.
func WriteArchive(w io.Writer, fsys fs.FS) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		h := &tar.Header{Name: name, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, name+"/", 0o755
			return tw.WriteHeader(h)
		case d.Type().IsRegular():
			b, err := fs.ReadFile(fsys, name)
			if err != nil {
				return err
			}
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(b))
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return fmt.Errorf("%s is neither a file nor a folder: not archived", name)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// memFS is a read-only tree of files held in memory: an archive's.
type memFS struct {
	nodes map[string]*memNode // by path; "." is the root
}

type memNode struct {
	name     string // base name
	data     []byte
	dir      bool
	children []string // base names, sorted
}

var (
	_ fs.ReadFileFS = (*memFS)(nil)
	_ fs.ReadDirFS  = (*memFS)(nil)
	_ fs.StatFS     = (*memFS)(nil)
)

func newMemFS() *memFS {
	return &memFS{nodes: map[string]*memNode{".": {name: ".", dir: true}}}
}

// addDir adds a folder and its parents; adding one twice is no change.
func (m *memFS) addDir(name string) error {
	if n, ok := m.nodes[name]; ok {
		if !n.dir {
			return fmt.Errorf("%q is both a file and a folder", name)
		}
		return nil
	}
	parent := path.Dir(name)
	if err := m.addDir(parent); err != nil {
		return err
	}
	m.link(parent, &memNode{name: path.Base(name), dir: true}, name)
	return nil
}

// addFile adds a file, and its folders; a name given twice is refused.
func (m *memFS) addFile(name string, data []byte) error {
	if _, ok := m.nodes[name]; ok {
		return fmt.Errorf("%q is in it twice", name)
	}
	parent := path.Dir(name)
	if err := m.addDir(parent); err != nil {
		return err
	}
	m.link(parent, &memNode{name: path.Base(name), data: data}, name)
	return nil
}

func (m *memFS) link(parent string, n *memNode, name string) {
	p := m.nodes[parent]
	i, _ := slices.BinarySearch(p.children, n.name)
	p.children = slices.Insert(p.children, i, n.name)
	m.nodes[name] = n
}

func (m *memFS) lookup(op, name string) (*memNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := m.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

func (m *memFS) Open(name string) (fs.File, error) {
	n, err := m.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		entries, _ := m.ReadDir(name)
		return &memDir{n: n, entries: entries}, nil
	}
	return &memFile{n: n, r: bytes.NewReader(n.data)}, nil
}

func (m *memFS) ReadFile(name string) ([]byte, error) {
	n, err := m.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return slices.Clone(n.data), nil
}

func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := m.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, fs.FileInfoToDirEntry(info{m.nodes[path.Join(name, c)]}))
	}
	return out, nil
}

func (m *memFS) Stat(name string) (fs.FileInfo, error) {
	n, err := m.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// info is a node's fs.FileInfo: the modes WriteArchive writes, no time.
type info struct{ n *memNode }

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return int64(len(i.n.data)) }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.n.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

type memFile struct {
	n *memNode
	r *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return info{f.n}, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }

// Seek and ReadAt let a reader that wants them (http.FileServer, a
// profile parser) have them.
func (f *memFile) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }
func (f *memFile) ReadAt(b []byte, off int64) (int, error)   { return f.r.ReadAt(b, off) }

type memDir struct {
	n       *memNode
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return info{d.n}, nil }
func (d *memDir) Close() error               { return nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.n.name, Err: errors.New("is a directory")}
}

func (d *memDir) ReadDir(count int) ([]fs.DirEntry, error) { return readDir(d.entries, &d.off, count) }

// readDir is fs.ReadDirFile's ReadDir over a listing, from *off on.
func readDir(entries []fs.DirEntry, off *int, count int) ([]fs.DirEntry, error) {
	rest := entries[*off:]
	if count <= 0 {
		*off = len(entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n := min(count, len(rest))
	*off += n
	return rest[:n], nil
}

// MemFS is files, by path, as a read-only fs.FS: what WriteArchive packs
// when the files are not already a folder's.
func MemFS(files map[string][]byte) (fs.FS, error) {
	m := newMemFS()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !fs.ValidPath(name) || name == "." {
			return nil, fmt.Errorf("%q is not a path inside a folder", name)
		}
		if err := m.addFile(name, files[name]); err != nil {
			return nil, err
		}
	}
	return m, nil
}
