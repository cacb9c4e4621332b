package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/internal/lab/record"
	"github.com/locklab/locklab/internal/lab/run"
)

// preflight checks, before anything runs, what a comparison needs: its
// binaries (a missing one, or a ghz of another version than the pinned
// one), scripts, modes and server flags, and an -out that is not a packed
// study (its new runs/ would sit beside the archive of other runs). Like a
// bad flag, its failure is the command line's: exit status 2. Rebuilding,
// comparing or packing reports runs nothing and needs none of it.
func (c command) preflight() error {
	if c.rerender != "" || c.diff != "" || c.pack != "" {
		return nil
	}
	if c.study != nil {
		return c.study.preflight()
	}
	if c.cfg.Out != "" {
		if _, err := os.Stat(filepath.Join(c.cfg.Out, record.RunsArchive)); err == nil {
			return fmt.Errorf("-out %s holds a packed study (%s): give a new folder", c.cfg.Out, record.RunsArchive)
		}
	}
	return run.Preflight(c.cfg)
}
