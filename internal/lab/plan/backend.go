package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/backend"
)

// Backend is the name of the factor that says where the bank's state lives:
// in the server's memory (the default) or in a database (server -backend
// mysql). A run over a database gets a private MariaDB of its own, which its
// server starts before it listens and stops when it stops (no -db-dsn), so
// that no run inherits another's tables, buffer pool or history. Only the
// workloads the server can keep in a database are swept over it (the bank);
// the designs that cannot serve the bank there are n/a, as the server's
// -list-modes -backend mysql says.
const Backend = "backend"

// DBPool is the name of the factor that sizes a database-backed server's
// connection pool (server -db-pool).
const DBPool = "db-pool"

// Cache is the name of the factor that puts a Redis cache-aside in front of
// the bank's database (server -cache). A run with the cache gets a private
// Redis of its own, which its server starts and stops as it does its
// MariaDB, so that no run reads another's entries. It means something only
// over a database: a comparison that sweeps it keeps the bank in one
// (checkCache).
const Cache = "cache"

// Cached reports whether a value of Cache puts a cache in front of the
// database (each run then starts a private Redis).
func Cached(v string) bool { return v != backend.CacheNone }

// OverDatabase reports whether a value of Backend puts the bank in a
// database (each run then starts a private MariaDB).
func OverDatabase(v string) bool { return v != backend.Memory }

// inDatabase: the server can keep this workload kind in a database.
func inDatabase(kind string) bool {
	return slices.Contains(backend.DatabaseWorkloads(), kind)
}

var backendFactor = &Factor{
	Name: Backend, JSON: "backend", Label: "backend", Default: backend.Memory,
	Usage: "comma-separated places for the bank's state: " + strings.Join(backend.Names(), ", ") +
		" (server -backend; mysql: a private MariaDB per run, started by the server)",
	Parse: func(it string) (string, error) {
		if !slices.Contains(backend.Names(), it) {
			return "", fmt.Errorf("-backend: %q: want %s", it, strings.Join(backend.Names(), " or "))
		}
		return it, nil
	},
	Encode:  func(v string) any { return v },
	Decode:  decodeString,
	Applies: inDatabase,
	ID: func(v string) string {
		if v == backend.Memory {
			return ""
		}
		return "-" + v
	},
	Server: func(v string, _ RunDirs) []string {
		if v == backend.Memory {
			return nil // the server's default: runs in memory keep their command lines
		}
		return []string{"-backend", v}
	},
	Refusal: func(mode, v string) string {
		return fmt.Sprintf("%s cannot serve the bank with its state in %s", mode, v)
	},
	OmitDefault: true,
}

var dbPoolDefault = strconv.Itoa(backend.DefaultPool)

var dbPoolFactor = &Factor{
	Name: DBPool, JSON: "db_pool", Label: "database pool", Default: dbPoolDefault,
	Usage: "comma-separated database connection pool sizes of a server with -backend mysql (server -db-pool), e.g. 1,9,32",
	Parse: func(it string) (string, error) {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > 500 {
			return "", fmt.Errorf("-db-pool: %q is not a pool size in 1..500", it)
		}
		return strconv.Itoa(n), nil
	},
	Encode: func(v string) any { n, _ := strconv.Atoi(v); return n },
	Decode: func(raw json.RawMessage) (string, error) {
		var n int
		err := json.Unmarshal(raw, &n)
		return strconv.Itoa(n), err
	},
	Applies: inDatabase,
	ID: func(v string) string {
		if v == dbPoolDefault {
			return ""
		}
		return "-pool" + v
	},
	Server: func(v string, _ RunDirs) []string {
		if v == dbPoolDefault {
			return nil
		}
		return []string{"-db-pool", v}
	},
	OmitDefault: true,
}

var cacheFactor = &Factor{
	Name: Cache, JSON: "cache", Label: "cache", Default: backend.CacheNone,
	Usage: "comma-separated caches in front of the bank's database: " + strings.Join(backend.Caches(), ", ") +
		" (server -cache; redis: a private Redis per run, started by the server; needs -backend " + backend.MySQL + ")",
	Parse: func(it string) (string, error) {
		if !slices.Contains(backend.Caches(), it) {
			return "", fmt.Errorf("-cache: %q: want %s", it, strings.Join(backend.Caches(), " or "))
		}
		return it, nil
	},
	Encode:  func(v string) any { return v },
	Decode:  decodeString,
	Applies: inDatabase,
	ID: func(v string) string {
		if !Cached(v) {
			return ""
		}
		return "-" + v
	},
	Server: func(v string, _ RunDirs) []string {
		if !Cached(v) {
			return nil
		}
		return []string{"-cache", v}
	},
	OmitDefault: true,
}

// checkCache refuses a space that sweeps a cache with the bank in memory:
// the server has no cache there, and the runs would fail one by one.
func checkCache(sp Space) error {
	if !slices.ContainsFunc(sp.Values(Cache), Cached) {
		return nil
	}
	if i := slices.IndexFunc(sp.Values(Backend), func(v string) bool { return !OverDatabase(v) }); i >= 0 {
		return fmt.Errorf("-cache %s: a cache sits in front of the bank's database; sweep it with -backend %s alone, not -backend %s",
			strings.Join(sp.Values(Cache), ","), backend.MySQL, strings.Join(sp.Values(Backend), ","))
	}
	return nil
}
