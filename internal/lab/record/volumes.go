package record

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// A study's archive larger than VolumeLimit is cut into volumes, so that no
// committed file is large: RunsArchive holds the first, runs.2.tar.gz the
// second (VolumeName), and so on, each a whole gzipped tar of some of the
// files in their lexical order. Open reads them all as one tree; a file in
// two of them is refused, as a file twice in one archive is.
const VolumeLimit = 1 << 20

// VolumeName is the file of the i-th volume of a study's archive, from 1.
func VolumeName(i int) string {
	if i == 1 {
		return RunsArchive
	}
	return "runs." + strconv.Itoa(i) + ".tar.gz"
}

var volumeName = regexp.MustCompile(`^runs\.([0-9]+)\.tar\.gz$`)

// Volumes lists the volumes of dir's archive, in order: none when it has no
// RunsArchive. A gap in their numbering, or a volume beyond the first
// without the first, is an error: a volume is missing.
func Volumes(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	first := false
	for _, e := range entries {
		if e.Name() == RunsArchive {
			first = true
			continue
		}
		if m := volumeName.FindStringSubmatch(e.Name()); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n < 2 {
				return nil, fmt.Errorf("%s: %s is no volume's name (the second is %s)", dir, e.Name(), VolumeName(2))
			}
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	if !first {
		if len(nums) > 0 {
			return nil, fmt.Errorf("%s holds %s but not %s, the first volume", dir, VolumeName(nums[0]), RunsArchive)
		}
		return nil, nil
	}
	out := []string{filepath.Join(dir, RunsArchive)}
	for i, n := range nums {
		if n != i+2 {
			return nil, fmt.Errorf("%s: %s is missing (%s is there)", dir, VolumeName(i+2), VolumeName(n))
		}
		out = append(out, filepath.Join(dir, VolumeName(n)))
	}
	return out, nil
}

// ReadVolumes reads the volumes of an archive (ReadArchive each) as one
// tree.
func ReadVolumes(files []string) (fs.FS, error) {
	m := newMemFS()
	for _, file := range files {
		v, err := ReadArchive(file)
		if err != nil {
			return nil, err
		}
		err = fs.WalkDir(v, ".", func(name string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || name == ".":
				return err
			case d.IsDir():
				return m.addDir(name)
			}
			b, err := fs.ReadFile(v, name)
			if err != nil {
				return err
			}
			return m.addFile(name, b)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", file, ErrBadArchive, err)
		}
	}
	return m, nil
}

// WriteVolumes is WriteArchive cut into volumes of at most limit bytes
// each: the files in lexical order, as many to a volume as fit. A tree
// that fits in one is one volume, the bytes WriteArchive writes. The cut
// is found by writing: each file's share is first estimated as its size
// gzipped on its own, scaled to what the whole tree comes to; a volume
// written past the limit makes every volume smaller by a tenth, and the
// cut is tried again. The same files give the same volumes. A single file
// larger than limit gzipped is an error.
func WriteVolumes(fsys fs.FS, limit int64) ([][]byte, error) {
	var whole bytes.Buffer
	if err := WriteArchive(&whole, fsys); err != nil {
		return nil, err
	}
	if int64(whole.Len()) <= limit {
		return [][]byte{whole.Bytes()}, nil
	}
	type entry struct {
		name string
		data []byte
		cost float64
	}
	var files []entry
	var est float64
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = zw.Write(b)
		if err := zw.Close(); err != nil {
			return err
		}
		c := float64(z.Len() + 64) // and its tar header
		files = append(files, entry{name, b, c})
		est += c
		return nil
	})
	if err != nil {
		return nil, err
	}
	budget := float64(limit) * est / float64(whole.Len()) * 0.95
	for range 20 {
		var vols [][]byte
		over := false
		for start := 0; start < len(files); {
			end, sum := start, 0.0
			for end < len(files) && (end == start || sum+files[end].cost <= budget) {
				sum += files[end].cost
				end++
			}
			part := map[string][]byte{}
			for _, f := range files[start:end] {
				part[f.name] = f.data
			}
			tree, err := MemFS(part)
			if err != nil {
				return nil, err
			}
			var b bytes.Buffer
			if err := WriteArchive(&b, tree); err != nil {
				return nil, err
			}
			if int64(b.Len()) > limit {
				if end-start == 1 {
					return nil, fmt.Errorf("%s is %d bytes gzipped, over a volume's %d", files[start].name, b.Len(), limit)
				}
				over = true
				break
			}
			vols = append(vols, b.Bytes())
			start = end
		}
		if !over {
			return vols, nil
		}
		budget *= 0.9
	}
	return nil, errors.New("no cut into volumes under the limit found")
}

// IsVolume says whether name is the name of an archive's volume: the
// first (RunsArchive) or one past it.
func IsVolume(name string) bool {
	return name == RunsArchive || volumeName.MatchString(name)
}
