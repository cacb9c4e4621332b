package report

import (
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/record"
)

// File is one file a report writes into its results folder.
type File struct {
	Name string
	Data []byte
}

// Files are a comparison's report files: meta.json, figures.json (every
// figure with the runs behind it), report.md, the forest plot it links
// (ForestFile; none without primaries) and report.html.
func (rep *Report) Files() ([]File, error) {
	meta, err := record.JSON(rep.Meta)
	if err != nil {
		return nil, err
	}
	figures, err := record.JSON(rep.Groups)
	if err != nil {
		return nil, err
	}
	page, err := rep.HTML()
	if err != nil {
		return nil, err
	}
	files := []File{{record.MetaFile, meta}, {"figures.json", figures}, {"report.md", []byte(rep.Markdown())}}
	forest, err := rep.Forest()
	if err != nil {
		return nil, err
	}
	if forest != nil {
		files = append(files, File{ForestFile, forest})
	}
	return append(files, File{"report.html", []byte(page)}), nil
}

// Write writes a comparison's report files into a results directory.
func Write(dir string, rep *Report) error {
	files, err := rep.Files()
	if err != nil {
		return err
	}
	return WriteFiles(dir, files)
}

// WriteFiles writes report files into a results directory.
func WriteFiles(dir string, files []File) error {
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
