// Package backend names where a locklab server can keep the bank's state
// and what can sit in front of it: the values of the server's -backend,
// -cache and -db-pool. The server's flags read them here, and so does the
// comparison runner's plan, which sweeps them without linking any of the
// server's code.
package backend

// Values of the server's -backend.
const (
	// Memory keeps every workload's state in the server's memory.
	Memory = "memory"
	// MySQL keeps the bank in a MariaDB or MySQL database (package
	// workload/dbbank); the others stay in memory.
	MySQL = "mysql"
)

// Names lists the values of -backend.
func Names() []string { return []string{Memory, MySQL} }

// DatabaseWorkloads names the workloads whose state a database can hold
// (-backend mysql): the bank. The server's workload table gives each of
// them its machine over the database.
func DatabaseWorkloads() []string { return []string{"bank"} }

// Values of the server's -cache, in front of the bank's database.
const (
	CacheNone  = "none"
	CacheRedis = "redis"
)

// Caches lists the values of -cache.
func Caches() []string { return []string{CacheNone, CacheRedis} }

// DefaultPool is the database connections a database-backed server keeps
// open when -db-pool does not say: the pool of the benchmark the bank
// workload comes from.
const DefaultPool = 9
