package report

import (
	"bytes"
	"fmt"
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

// SameFiles says where two renderings differ: "" when every file has the
// same name and bytes, else the first file that does not, and the first
// line where it differs.
func SameFiles(a, b []File) string {
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return b[i].Name + " is only in the second"
		case i >= len(b):
			return a[i].Name + " is only in the first"
		case a[i].Name != b[i].Name:
			return a[i].Name + " against " + b[i].Name
		case !bytes.Equal(a[i].Data, b[i].Data):
			la, lb := bytes.Split(a[i].Data, []byte("\n")), bytes.Split(b[i].Data, []byte("\n"))
			line := 0
			for line < min(len(la), len(lb)) && bytes.Equal(la[line], lb[line]) {
				line++
			}
			return fmt.Sprintf("%s differs from line %d", a[i].Name, line+1)
		}
	}
	return ""
}
