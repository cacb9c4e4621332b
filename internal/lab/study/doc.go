// Package study is the catalogue of the lab's studies: a study is one row
// of Studies — its name, the engine that runs it, its plans (the runner's
// arguments, each with the sub-folder it writes), its folder under
// docs/results, its budget and one line on what it measures.
//
// Everything else reads the table: `go run ./cmd/compare -study NAME`
// (and `make study NAME=...`) runs a row, `-study list` prints the table
// with the runner's estimate of each row's time, `make help` shows that
// listing, `-study index` rewrites the index block of
// docs/results/README.md, and cmd/compare's tests check every row's
// estimate against its budget. Adding a study is adding a row.
package study
