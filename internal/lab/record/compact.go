package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// An archive is packed in one of two layouts. The first (v1) is runs/ as
// the runner wrote it, file for file. The second (ArchiveSchema) is
// smaller, for a study kept in git:
//
//   - runs/<ManifestFile> marks it, and holds every log of runs/ (the
//     servers' and drivers' .log files, most a line or two, whose tar
//     headers outweighed them): one file per archive in place of thousands.
//     Open puts each log back at its own name, so that readers see the tree
//     the runner wrote.
//   - A record whose latency histogram no report reads — a run the validity
//     gate left out, or any run of a study whose reports draw no latency
//     curve — keeps its summary (calls, counts, the percentiles the driver
//     computed) and drops the histogram: "hdr" is "" and
//     "histogram_dropped" says why (DropHistogram). The histograms were
//     most of an archive's bytes, and gzip cannot shrink them.
//
// An archive without the manifest is v1 and reads as it always did.
const (
	ManifestFile  = "archive.json"
	ArchiveSchema = "locklab.runs-archive/v2"
)

// Manifest is runs/<ManifestFile>.
type Manifest struct {
	Schema string `json:"schema"`
	// Logs are the logs of runs/, by base name (runs/<name>), bundled.
	Logs map[string]string `json:"logs"`
}

// ErrArchiveSchema marks a manifest this reader does not know.
var ErrArchiveSchema = errors.New("unknown archive schema")

var manifestPath = path.Join(RunsDir, ManifestFile)

// bundled reports whether a file of runs/ goes into the manifest: a log
// directly under runs/, valid UTF-8 so that a JSON string holds it as it is.
func bundled(name string, data []byte) bool {
	return path.Dir(name) == RunsDir && strings.HasSuffix(name, ".log") && utf8.Valid(data)
}

// Bundle is files — runs/'s tree, by path — laid out as ArchiveSchema lays
// them out: its logs moved into runs/<ManifestFile>, the other files as
// they are. files is not changed. A tree that holds a manifest already is
// refused: it is bundled.
func Bundle(files map[string][]byte) (map[string][]byte, error) {
	if _, ok := files[manifestPath]; ok {
		return nil, fmt.Errorf("%s is in the tree already: it is bundled", manifestPath)
	}
	out := make(map[string][]byte, len(files))
	m := Manifest{Schema: ArchiveSchema, Logs: map[string]string{}}
	for name, b := range files {
		if bundled(name, b) {
			m.Logs[path.Base(name)] = string(b)
			continue
		}
		out[name] = b
	}
	b, err := JSON(m)
	if err != nil {
		return nil, err
	}
	out[manifestPath] = b
	return out, nil
}

// Unbundle is the tree Bundle's files came from: the manifest's logs back
// at their names, the manifest gone. A tree without a manifest (v1) is
// returned as it is; a manifest of another schema, or a log whose name is
// taken, is an error.
func Unbundle(files map[string][]byte) (map[string][]byte, error) {
	b, ok := files[manifestPath]
	if !ok {
		return files, nil
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadArchive, manifestPath, err)
	}
	if m.Schema != ArchiveSchema {
		return nil, fmt.Errorf("%w: %s says %q; this reader knows %q (and archives without it)", ErrArchiveSchema, manifestPath, m.Schema, ArchiveSchema)
	}
	out := make(map[string][]byte, len(files)+len(m.Logs))
	for name, b := range files {
		if name != manifestPath {
			out[name] = b
		}
	}
	for _, base := range slices.Sorted(maps.Keys(m.Logs)) {
		name := path.Join(RunsDir, base)
		if path.Base(name) != base || !bundled(name, []byte(m.Logs[base])) {
			return nil, fmt.Errorf("%w: %s: %q is not a log of %s/", ErrBadArchive, manifestPath, base, RunsDir)
		}
		if _, ok := out[name]; ok {
			return nil, fmt.Errorf("%w: %s is both in %s and a file of its own", ErrBadArchive, name, manifestPath)
		}
		out[name] = []byte(m.Logs[base])
	}
	return out, nil
}

// Files reads every file of fsys, by path.
func Files(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files[name], err = fs.ReadFile(fsys, name)
		return err
	})
	return files, err
}

// unbundled is runs, a tree read from an archive's volumes, as Unbundle
// gives it back: itself where it has no manifest.
func unbundled(runs fs.FS) (fs.FS, error) {
	if _, err := fs.Stat(runs, manifestPath); err != nil {
		return runs, nil
	}
	files, err := Files(runs)
	if err != nil {
		return nil, err
	}
	if files, err = Unbundle(files); err != nil {
		return nil, err
	}
	return MemFS(files)
}

// hdrField is a record's histogram as JSON writes it, indented: "hdr"
// inside "result", one level down.
var hdrField = regexp.MustCompile(`\n    "hdr": "[^"\\]*"`)

// DropHistogram is a record, as JSON wrote it, without its latency
// histogram: "hdr" set to "" and "histogram_dropped": why added, every
// other byte as it was. ok is false for a record with no histogram to
// drop (k6's, or one dropped already), returned as it is. A record not
// laid out as JSON writes one is an error, and so is one whose rewrite
// would change anything else.
func DropHistogram(b []byte, why string) (out []byte, ok bool, err error) {
	if why == "" {
		return nil, false, errors.New("a histogram is dropped for a reason: give it")
	}
	var was map[string]any
	if err := json.Unmarshal(b, &was); err != nil {
		return nil, false, err
	}
	res, _ := was["result"].(map[string]any)
	if hdr, _ := res["hdr"].(string); hdr == "" {
		return b, false, nil
	}
	// The reason goes last, where JSON writes Run's last field.
	locs := hdrField.FindAllIndex(b, -1)
	end := bytes.LastIndex(b, []byte("\n}"))
	if len(locs) != 1 || end < locs[0][1] {
		return nil, false, errors.New("record not laid out as record.JSON writes it: its histogram is left alone")
	}
	reason, err := json.Marshal(why)
	if err != nil {
		return nil, false, err
	}
	l := locs[0]
	out = slices.Concat(b[:l[0]], []byte("\n    \"hdr\": \"\""), b[l[1]:end], []byte(",\n  \"histogram_dropped\": "), reason, b[end:])
	var is map[string]any
	if err := json.Unmarshal(out, &is); err != nil {
		return nil, false, fmt.Errorf("record without its histogram does not parse: %w", err)
	}
	res["hdr"] = ""
	was["histogram_dropped"] = why
	if !reflect.DeepEqual(was, is) {
		return nil, false, errors.New("dropping the histogram changed more than the histogram")
	}
	return out, true, nil
}

// profileField is an attributed record's CPU profile file as JSON writes
// it, indented: "profile" inside "attribution", one level down, and never
// its last field.
var profileField = regexp.MustCompile(`\n    "profile": "([^"\\]*)",`)

// DropProfile is a record, as JSON wrote it, that no longer names the CPU
// profile kept beside it (Attribution.Profile ""): an archive keeps the
// figures folded from a profile, in the record, and not the profile. file
// is the name it named; ok is false for a record that names none, returned
// as it is. A record not laid out as JSON writes one is an error, and so is
// one whose rewrite would change anything else.
func DropProfile(b []byte) (out []byte, file string, ok bool, err error) {
	var was map[string]any
	if err := json.Unmarshal(b, &was); err != nil {
		return nil, "", false, err
	}
	attr, _ := was["attribution"].(map[string]any)
	if p, _ := attr["profile"].(string); p == "" {
		return b, "", false, nil
	}
	locs := profileField.FindAllSubmatchIndex(b, -1)
	if len(locs) != 1 {
		return nil, "", false, errors.New("record not laid out as record.JSON writes it: its profile is left alone")
	}
	l := locs[0]
	file = string(b[l[2]:l[3]])
	out = slices.Concat(b[:l[0]], b[l[1]:])
	var is map[string]any
	if err := json.Unmarshal(out, &is); err != nil {
		return nil, "", false, fmt.Errorf("record without its profile does not parse: %w", err)
	}
	delete(attr, "profile")
	if !reflect.DeepEqual(was, is) {
		return nil, "", false, errors.New("dropping the profile changed more than the profile")
	}
	return out, file, true, nil
}
