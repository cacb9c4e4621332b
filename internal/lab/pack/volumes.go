package pack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
)

// writeTemps writes files as the volumes of an archive
// (record.WriteVolumes), each to a temporary file in dir, beside its final
// name, so that the renames that put them in place cannot cross file
// systems. remove removes those not yet put in place.
func writeTemps(dir string, files map[string][]byte) (tmps []string, remove func(), err error) {
	remove = func() {
		for _, t := range tmps {
			os.Remove(t) // once renamed, there is nothing to remove
		}
	}
	tree, err := record.MemFS(files)
	if err != nil {
		return nil, remove, err
	}
	vols, err := record.WriteVolumes(tree, record.VolumeLimit)
	if err != nil {
		return nil, remove, err
	}
	for _, v := range vols {
		tmp, err := os.CreateTemp(dir, ".pack-*")
		if err != nil {
			return nil, remove, err
		}
		tmps = append(tmps, tmp.Name())
		_, werr := tmp.Write(v)
		// CreateTemp's 0600 would keep the archive from the folder's other
		// readers.
		if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Sync(), tmp.Close()); err != nil {
			return nil, remove, fmt.Errorf("%s: %w", tmp.Name(), err)
		}
	}
	return tmps, remove, nil
}

// install puts the temporary volumes in place, then removes the volumes
// past them that an earlier, larger archive had; it returns the archive's
// size and its volumes' names.
func install(dir string, tmps []string) (size int64, names string, err error) {
	var ns []string
	for i, t := range tmps {
		to := filepath.Join(dir, record.VolumeName(i+1))
		if err := os.Rename(t, to); err != nil {
			return 0, "", err
		}
		if st, err := os.Stat(to); err == nil {
			size += st.Size()
		}
		ns = append(ns, record.VolumeName(i+1))
	}
	for i := len(tmps) + 1; ; i++ {
		err := os.Remove(filepath.Join(dir, record.VolumeName(i)))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return 0, "", err
		}
	}
	return size, strings.Join(ns, ", "), nil
}
