#!/usr/bin/env bash
# make test: everything CI runs (.ci/run calls make test, which calls this).
#
#   scripts/test.sh        all of it, in two stages (below)
#   scripts/test.sh unit   go test -race over every package (make unit), without make test's additions
#   scripts/test.sh e2e    k6/e2e.sh: every driver against every mode (make e2e), its own defaults
#
# Stage one: the house check and the tools side by side. Debian's packages
# (make debs, one apt-get) and the module's own dependencies download while
# the tools build from source and the house check compiles and runs, so
# that the CPUs work while the network does; a failed house check still
# stops the run before the checks.
# Stage two, in order: generated code fresh (make proto-check), gofmt, the
# race-enabled unit tests, the end-to-end smokes.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
MAKE=${MAKE:-make}
mk() { $MAKE --no-print-directory "$@"; }

# TESTGOGC is the GOGC the go commands run with, and so the compiler and
# every process the tests start: the compiler collects garbage a quarter as
# often, for about a quarter more memory (from empty caches on two CPUs:
# the standard library 106 → 85 CPU-seconds, the race-enabled build of the
# tests 290 → 262). No test reads the setting.
export GOGC=${TESTGOGC:-400}

# TESTPKGS is how many packages go test builds and tests at once: one more
# than the machine has CPUs (go test's default is as many). Several of the
# longest packages spend much of their time waiting (servers starting, a
# database, fsync, timed runs pinned to one CPU), and one package more keeps
# the CPUs busy meanwhile (on two CPUs, 301 s → 228 s of tests with warm
# caches).
TESTPKGS=${TESTPKGS:-$(($(nproc) + 1))}

# together runs each command line in the background and waits for all of
# them; it fails if any failed.
together() {
	local pids=() rc=0
	for c in "$@"; do bash -c "set -euo pipefail; $c" & pids+=($!); done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

# The builds: the standard library compiled once while the tools modules
# download, then k6 and protoc's Go plugins in one go build (make tools),
# ghz and the house check side by side. go commands started together on an
# empty cache share a build cache but not the work in progress: each
# compiled the standard library and the packages they share for itself
# (this step from empty caches on two CPUs: about 500 CPU-seconds and 4 min
# 16 s started together, 430 and 3 min 41 s so).
builds() {
	together "$GO build std" "cd tools && $GO mod download && cd ghz && $GO mod download"
	mk -j3 house tools ghz
}

# unit is go test -race over every package. make test adds -vet=all and
# -tags=browser: vet runs every analyzer go vet runs inside the
# race-enabled go test rather than with make vet (go vet compiles every
# dependency without -race for its type information, a second compilation
# of them all: about two minutes of CPU from empty caches), and the browser
# test (report.html in headless Chromium) runs beside the other packages'
# tests, so the report package is compiled and tested once.
unit() {
	$GO test -race -count=1 -p "$TESTPKGS" "$@" -timeout 15m ./...
}

# e2e is k6/e2e.sh, which says what each knob does. make test runs every
# mode at once (E2E_JOBS=all) with one-second smokes (E2E_SECONDS=1), and
# ghz-run linked from the race-enabled packages go test compiled
# (E2E_SEEDS_RACE=1).
e2e() {
	K6=$PWD/bin/k6 GHZ=$PWD/bin/ghz GO=$GO k6/e2e.sh
}

case ${1:-all} in
all)
	together "$MAKE --no-print-directory debs" "$GO mod download" "$(declare -f mk together builds); GO='$GO' MAKE='$MAKE' builds"
	mk proto-check fmt
	unit -vet=all -tags=browser
	E2E_JOBS=all E2E_SECONDS=1 E2E_SEEDS_RACE=1 e2e
	echo "make test: all checks passed"
	;;
unit) unit ;;
e2e) e2e ;;
*)
	echo "usage: scripts/test.sh [all|unit|e2e]" >&2
	exit 2
	;;
esac
