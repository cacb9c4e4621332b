package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/render"
	"github.com/locklab/locklab/summary"
)

// Repack rewrites a packed folder's archive in record.ArchiveSchema's
// layout (compact): each record keeps its latency histogram once (a record
// written before record.Run's MarshalJSON left the percentile curve out
// carries both the histogram and the curve drawn from it, and the curve
// goes where the histogram gives it back exactly), a record whose histogram
// no report reads drops it, and the logs go into one file. An archive of
// volumes over record.VolumeLimit is cut again into smaller ones, as Pack
// cuts it. As Pack, it puts the new archive in place only when the
// folder's report renders the same bytes from it as from the old one and
// the loaders read the same records from both, but for the histograms
// dropped. An archive in that layout already is left as it is.
func Repack(dir string, out io.Writer) error {
	volumes, err := record.Volumes(dir)
	if err != nil {
		return err
	}
	raw, err := record.ReadVolumes(volumes)
	if err != nil {
		return err
	}
	var oldSize int64
	oversize := false
	for _, v := range volumes {
		if st, err := os.Stat(v); err == nil {
			oldSize += st.Size()
			oversize = oversize || st.Size() > record.VolumeLimit
		}
	}
	oldFiles, err := record.Files(raw)
	if err != nil {
		return err
	}
	old, err := unbundledTree(oldFiles)
	if err != nil {
		return fmt.Errorf("%s: %w", volumes[0], err)
	}
	tree, err := record.Files(old)
	if err != nil {
		return err
	}
	root := os.DirFS(dir)
	before := record.Packed(root, old)
	c, err := compact(before, tree)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if maps.EqualFunc(c.files, oldFiles, bytes.Equal) && !oversize {
		fmt.Fprintf(out, "repack: %s: %s is in the smaller layout (%s) already, every volume under %s: unchanged\n",
			dir, record.RunsArchive, record.ArchiveSchema, megabytes(record.VolumeLimit))
		return nil
	}
	tmps, remove, err := writeTemps(dir, c.files)
	defer remove()
	if err != nil {
		return err
	}
	got, err := record.ReadVolumes(tmps)
	if err != nil {
		return err
	}
	if err := sameTree(got, c.files); err != nil {
		return err
	}
	newTree, err := unbundledTree(c.files)
	if err != nil {
		return err
	}
	after := record.Packed(root, newTree)
	checked := "its records read the same (its runs make no report)"
	if fromOld, err := render.Render(before); err == nil {
		checked = "its report renders the same and its records read the same"
		fromNew, err := render.Render(after)
		if err != nil {
			return fmt.Errorf("%w: its report renders from the old archive but not from the new (%v); the old is kept", ErrDiffers, err)
		}
		if d := sameFiles(fromOld, fromNew); d != "" {
			return fmt.Errorf("%w: its report is not the one the old archive renders (%s); the old is kept", ErrDiffers, d)
		}
	}
	recsOld, err := records(before, c.dropped)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	recsNew, err := records(after, c.dropped)
	if err != nil || !bytes.Equal(recsOld, recsNew) {
		return fmt.Errorf("%w: its records do not read as the old archive's (%v); the old is kept", ErrDiffers, err)
	}
	newSize, names, err := install(dir, tmps)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "repack: %s: %s; %s (%s) → %s (%s); %s\n",
		dir, c, strings.Join(baseNames(volumes), ", "), megabytes(oldSize), names, megabytes(newSize), checked)
	return nil
}

// isRecord says whether an archive entry is a run record: runs/<id>.json,
// not a driver's summary beside it.
func isRecord(name string) bool {
	return path.Dir(name) == record.RunsDir && strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, record.SummarySuffix)
}

// curveField is a record's percentile curve as record.JSON indents it:
// "percentiles" inside "result", one level down, its list closed at the
// same indent.
var curveField = regexp.MustCompile(`(?s)\n    "percentiles": \[\n.*?\n    \](,?)\n`)

// slimRecord is a record without its percentile curve where its histogram
// gives that curve back exactly: the field set to null, as record.Run's
// MarshalJSON writes it, every other byte as it was. ok is false for a
// record to keep as it is: no histogram, no curve, or a curve the
// histogram does not give back.
func slimRecord(b []byte) (out []byte, ok bool, err error) {
	var before struct{ Result *summary.Summary }
	if err := json.Unmarshal(b, &before); err != nil {
		return nil, false, err
	}
	if before.Result == nil || before.Result.HDR == "" || len(before.Result.Percentiles) == 0 {
		return nil, false, nil
	}
	locs := curveField.FindAllSubmatchIndex(b, -1)
	if len(locs) != 1 {
		return nil, false, nil // not laid out as record.JSON writes: left alone
	}
	l := locs[0]
	out = slices.Concat(b[:l[0]], []byte("\n    \"percentiles\": null"), b[l[2]:l[3]], []byte("\n"), b[l[1]:])
	// Nothing but the curve changed, and the histogram draws it again.
	var was, is map[string]any
	if err := json.Unmarshal(b, &was); err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(out, &is); err != nil {
		return nil, false, fmt.Errorf("slimmed record does not parse: %w", err)
	}
	res, _ := was["result"].(map[string]any)
	if res == nil {
		return nil, false, nil
	}
	res["percentiles"] = nil
	if !reflect.DeepEqual(was, is) {
		return nil, false, errors.New("slimming changed more than the percentile curve")
	}
	var after struct{ Result *summary.Summary }
	if err := json.Unmarshal(out, &after); err != nil {
		return nil, false, err
	}
	if err := record.CurveFromHDR(after.Result); err != nil {
		return nil, false, err
	}
	if !reflect.DeepEqual(before.Result.Percentiles, after.Result.Percentiles) {
		return nil, false, nil // the histogram does not give this curve back: keep it
	}
	return out, true, nil
}

// baseNames are files' names without their folder.
func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}
