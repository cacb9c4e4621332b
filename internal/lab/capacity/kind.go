package capacity

import (
	"errors"
	"io/fs"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/report"
)

// Kind is the capacity study as a kind of results folder (report.Kind):
// one with a capacity.json, whose report is the study's own.
type Kind struct{}

var _ report.Kind = Kind{}

// Render is a capacity folder's report files; ok is false for a folder
// with no capacity.json.
func (Kind) Render(folder fs.FS, meta record.Meta, runs []*record.Run) ([]report.File, bool, error) {
	c, ok, err := LoadCapacity(folder)
	if err != nil || !ok {
		return nil, false, err
	}
	rep, err := NewCapacity(meta, c, runs)
	if err != nil {
		return nil, true, err
	}
	files, err := rep.Files()
	return files, true, err
}

// Files are a capacity study's report files: report.md, the forest plot
// it links (report.ForestFile; none without comparisons) and report.html.
func (rep *CapacityReport) Files() ([]report.File, error) {
	page, err := rep.HTML()
	if err != nil {
		return nil, err
	}
	files := []report.File{{Name: "report.md", Data: []byte(rep.Markdown())}}
	forest, err := rep.Forest()
	if err != nil {
		return nil, err
	}
	if forest != nil {
		files = append(files, report.File{Name: report.ForestFile, Data: forest})
	}
	return append(files, report.File{Name: "report.html", Data: []byte(page)}), nil
}

// Write writes a capacity study's report files (Files) into its results
// directory.
func Write(dir string, meta record.Meta, c *Capacity, runs []*record.Run) error {
	if c == nil {
		return errors.New("no capacity record")
	}
	rep, err := NewCapacity(meta, c, runs)
	if err != nil {
		return err
	}
	files, err := rep.Files()
	if err != nil {
		return err
	}
	return report.WriteFiles(dir, files)
}
