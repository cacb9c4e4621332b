// Package ghz is what locklab knows of ghz (github.com/bojand/ghz), the
// bank seed's load generator: the call and call-data template of every
// workload case it can send, and its JSON report read into the
// driver-neutral summary (package summary).
//
// ghz sends one method per run, so a case, not a workload's mix, is what a
// ghz run drives. Random accounts and keys come from ghz's own call-data
// template functions (randomInt, and sprig's add, mod, add1), drawn by ghz
// per call, so that no list of requests has to be generated beforehand.
package ghz
