// Package seeds renders the four experiments locklab grew out of, each in
// its own table, from results folders the runner wrote (record.Load): the
// inputQ-vs-mutex k6 ladder, the gRPC bank benchmark run with ghz, the rpcx
// benchmark page's concurrency table, and the nGrinder before/after report;
// the bank benchmark also over a database (MariaDB, and Redis in front of
// it for the reads), as its source ran it.
//
// Each table is the seed's own shape — its rows and columns, the designs
// side by side — followed by the figures the seed published, quoted as
// measured on the seed's machine, and by the runner's classification of
// every run: a seed's numbers were mostly its load generator's, and a
// table here says whether its driver was saturated.
//
// Seeds is the one list of them; cmd/seeds ranges over it, and each is a
// row seed-<name> of the catalogue of studies (internal/lab/study).
package seeds
