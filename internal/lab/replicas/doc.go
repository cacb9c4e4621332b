// Package replicas is the replicas study: N locklab replicas, each on a
// host of its own (internal/lab/hosts) with an equal CPU quota
// (internal/lab/cgroup), reached through a balancer process
// (internal/lab/balancer), through the client's own balancing
// (internal/lab/clientlb) or directly, and driven by a keyed Go driver that
// puts every call's key in the x-key header.
//
// Every finding of the lab's other studies is about one server process,
// where a mutex or an owner goroutine serialises the state. Across replicas
// with state in memory nothing does, and the study shows it:
//
//   - the anomaly table: every design of the server's registry under every
//     front (Fronts: each balancer's policies, each client-side policy).
//     Round robin spreads one key over several replicas: the counter loses
//     acknowledged increments at every replica a reader may ask, and the
//     bank acknowledges overdrafts and keeps balances that disagree. Key
//     routing sends each key to one replica, and none of that happens.
//   - the same table over one database: every design that can keep the
//     bank in MariaDB (DBDesigns), its replicas sharing one private server
//     (workload/dbbank/dbinst), the transfers sent with request ids and
//     retried when fenced (internal/lab/fleet's Transfer), the database
//     audited after each run (fleet's Check). A design whose registry row
//     needs a transaction per command or a fenced owner claims safety
//     across replicas (ClaimsSafety) and must show no anomaly under every
//     front; the others are measured.
//   - the cost over one database: routed-owner against db-rowlock and the
//     mutex over the database, two replicas behind HAProxy's key policy,
//     with the fenced retries per design.
//   - the cost of the hop: calls/s, p99 and CPU per call at 1, 2 and 3
//     replicas under each front, in short rounds alternated in a random
//     order per block and analysed paired against the direct connection to
//     one replica (internal/lab/paired).
//   - two seeds' replica tables: the nGrinder post's scale-out (one server,
//     then two behind nginx) and the rpcx page's one client, two servers,
//     each round saying whether the driver or the servers ran out first.
//
// One 2-CPU machine shows the hop's cost, correctness across replicas and
// the CPU one call costs under a quota. It cannot show capacity on N
// machines: its replicas share two CPUs with the driver and the balancer.
//
// What a cluster makes it removes: on Close, after a failed Start, and,
// through Sweep, after its runner was killed (kill -9). Every namespace,
// cgroup, process and directory carries the runner's PID.
package replicas
