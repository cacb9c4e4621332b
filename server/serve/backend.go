package serve

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/locklab/locklab/backend"
	"github.com/locklab/locklab/server"
	"github.com/locklab/locklab/workload/dbbank"
	"github.com/locklab/locklab/workload/dbbank/dbinst"
)

// Values of -cache (package backend names them).
const (
	CacheNone  = backend.CacheNone
	CacheRedis = backend.CacheRedis
)

// Caches lists the values of -cache.
func Caches() []string { return backend.Caches() }

// checkBackend checks -backend, -db-dsn, -db-pool, -cache and -redis-addr
// together: the database flags mean something only with -backend mysql.
func (o Options) checkBackend() error {
	if !slices.Contains(server.Backends(), o.Backend) {
		return fmt.Errorf("-backend %q: want one of %s", o.Backend, strings.Join(server.Backends(), ", "))
	}
	if !slices.Contains(Caches(), o.Cache) {
		return fmt.Errorf("-cache %q: want one of %s", o.Cache, strings.Join(Caches(), ", "))
	}
	if o.DBPool < 1 {
		return fmt.Errorf("-db-pool %d: want a count >= 1", o.DBPool)
	}
	if o.Backend == server.BackendMySQL {
		if o.Cache == CacheNone && o.RedisAddr != "" {
			return fmt.Errorf("-redis-addr is only used with -cache %s", CacheRedis)
		}
		if o.DBTemplate != "" {
			if o.DBDSN != "" {
				return fmt.Errorf("-db-template is only used without -db-dsn (for the private MariaDB)")
			}
			if !dbinst.IsData(o.DBTemplate) {
				return fmt.Errorf("-db-template %q: not a MariaDB data directory (no mysql/ in it; make one with mariadb-install-db)", o.DBTemplate)
			}
		}
		if len(o.DBOwner) > dbbank.MaxOwner {
			return fmt.Errorf("-db-owner %q: want at most %d bytes", o.DBOwner, dbbank.MaxOwner)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"db-dsn", o.DBDSN != ""}, {"db-template", o.DBTemplate != ""}, {"cache", o.Cache != CacheNone}, {"redis-addr", o.RedisAddr != ""}, {"db-owner", o.DBOwner != ""}, {"db-no-fencing", o.DBNoFencing}} {
		if f.set {
			return fmt.Errorf("-%s is only used with -backend %s", f.name, server.BackendMySQL)
		}
	}
	return nil
}

// privateServers starts, with -backend mysql, a private MariaDB when no
// -db-dsn is given and a private Redis when -cache redis has no
// -redis-addr, in a temporary directory, and points cfg at them. stop
// stops them and removes the directory.
func (o Options) privateServers(ctx context.Context, cfg *server.Config, stderr io.Writer) (stop func(), err error) {
	stop = func() {}
	if o.Backend != server.BackendMySQL || o.DBDSN != "" && (o.Cache == CacheNone || o.RedisAddr != "") {
		return stop, nil
	}
	dir, err := os.MkdirTemp("", "locklab-db-")
	if err != nil {
		return stop, err
	}
	var stops []func() error
	stop = func() {
		for _, s := range slices.Backward(stops) {
			_ = s()
		}
		_ = os.RemoveAll(dir)
	}
	if o.DBDSN == "" {
		db, err := dbinst.StartMariaDBFrom(ctx, dir+"/mariadb", o.DBTemplate)
		if err != nil {
			stop()
			return func() {}, err
		}
		stops = append(stops, db.Stop)
		cfg.DB.DSN = db.DSN()
		fmt.Fprintf(stderr, "locklab: a private MariaDB (%s) in %s, -db-dsn %s\n", db.Version, db.Dir, db.DSN())
	}
	if o.Cache == CacheRedis && o.RedisAddr == "" {
		r, err := dbinst.StartRedis(ctx, dir+"/redis")
		if err != nil {
			stop()
			return func() {}, err
		}
		stops = append(stops, r.Stop)
		cfg.DB.RedisAddr = r.Addr
		fmt.Fprintf(stderr, "locklab: a private Redis (%s), -redis-addr %s\n", r.Version, r.Addr)
	}
	return stop, nil
}
