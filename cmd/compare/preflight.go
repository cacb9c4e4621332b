package main

import "github.com/locklab/locklab/internal/lab/run"

// preflight checks, before anything runs, what a comparison needs: its
// binaries (a missing one, or a ghz of another version than the pinned
// one), scripts, modes and server flags. Like a bad flag, its failure is
// the command line's: exit status 2. Rebuilding or comparing reports runs
// nothing and needs none of it.
func (c command) preflight() error {
	if c.rerender != "" || c.diff != "" {
		return nil
	}
	return run.Preflight(c.cfg)
}
