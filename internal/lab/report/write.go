package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/record"
)

// Write writes a report's files into a results directory: meta.json,
// figures.json (every figure with the runs behind it), report.md and
// report.html.
func Write(dir string, rep *Report) error {
	if err := record.WriteJSON(filepath.Join(dir, "meta.json"), rep.Meta); err != nil {
		return err
	}
	if err := record.WriteJSON(filepath.Join(dir, "figures.json"), rep.Groups); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644); err != nil {
		return err
	}
	page, err := rep.HTML()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), []byte(page), 0o644)
}

// Rerender rebuilds a results directory's report from its raw files,
// running nothing.
func Rerender(dir string, out io.Writer) error {
	meta, runs, err := record.LoadDir(dir)
	if err != nil {
		return err
	}
	if c, ok, err := record.LoadCapacity(dir); err != nil || ok {
		if err == nil {
			err = WriteCapacity(dir, meta, c, runs)
		}
		if err == nil {
			fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, "report.md"))
		}
		return err
	}
	rep, err := New(meta, runs)
	if err != nil {
		return err
	}
	if err := Write(dir, rep); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, "report.md"))
	return nil
}
