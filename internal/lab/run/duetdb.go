package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/locklab/locklab/internal/lab/proc"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// Side by side over a database, each arm's server starts a private
// MariaDB, as an isolated run's does, and the database joins the arm's CPU
// group with its server. Two things differ, so that an arm's work stays in
// its group and a round starts in seconds:
//
//   - the databases keep their files on a tmpfs (DBFilesRoot): a commit
//     then costs the database CPU, in its group, where on a disk its
//     flushes kept kernel threads busy outside every group, and the gate
//     dropped the rounds;
//   - every database's data directory is copied from one installed once
//     per comparison (server -db-template), where installing one runs a
//     server of its own for seconds of CPU, a dozen at once on one CPU.
//
// The cost of a flush to disk is the durability study's (the WAL's group
// commit); over a database side by side, what differs between the arms is
// the CPU each design's calls cost the server and its database.

// DBFilesRoot is the tmpfs the side-by-side databases' files go on.
var DBFilesRoot = "/dev/shm"

// dbFilesPrefix names the directory of one runner's databases, its PID
// after it, so that the next runner removes those of one that died.
const dbFilesPrefix = "locklab-duet-"

const tmpfsMagic = 0x01021994

// isTmpfs reports whether path is on a tmpfs.
func isTmpfs(path string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(path, &st) == nil && st.Type == tmpfsMagic
}

// dbFiles is one runner's directory for its arms' databases: the servers'
// temporary directory (TMPDIR), and the installed data directory each
// copies.
type dbFiles struct {
	dir, template string
}

// newDBFiles makes the directory under DBFilesRoot and installs the data
// directory the arms copy, after removing what a runner that died left.
func newDBFiles(ctx context.Context) (*dbFiles, error) {
	if !isTmpfs(DBFilesRoot) {
		return nil, fmt.Errorf("side by side over a database: %s is not a tmpfs", DBFilesRoot)
	}
	removeStaleDBFiles()
	f := &dbFiles{dir: filepath.Join(DBFilesRoot, dbFilesPrefix+strconv.Itoa(os.Getpid()))}
	f.template = filepath.Join(f.dir, "template", "data")
	if err := os.RemoveAll(f.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return nil, err
	}
	if err := dbinst.InstallData(ctx, f.template); err != nil {
		_ = os.RemoveAll(f.dir)
		return nil, err
	}
	return f, nil
}

// env is an arm's server's environment beyond the runner's: its private
// database's directory made in the runner's.
func (f *dbFiles) env() []string { return []string{"TMPDIR=" + f.dir} }

// args are an arm's server's flags beyond its spec's.
func (f *dbFiles) args() []string { return []string{"-db-template", f.template} }

func (f *dbFiles) close() error { return os.RemoveAll(f.dir) }

// removeStaleDBFiles removes the directories of runners no longer alive.
func removeStaleDBFiles() {
	for dir, owner := range proc.Owned(DBFilesRoot, dbFilesPrefix) {
		if !proc.Alive(owner) {
			_ = os.RemoveAll(dir)
		}
	}
}
