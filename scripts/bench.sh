#!/usr/bin/env bash
# The store's benchmarks and the server's measuring cost, written under
# docs/results/ (make bench-store, bench-store-runtimes, bench-measure).
#
#   scripts/bench.sh store      every design × op × parallelism × critical section × CPU count → docs/results/store/
#   scripts/bench.sh runtimes   the same rows without work, built by each Go release → docs/results/runtimes/store/
#   scripts/bench.sh measure    what the server's measuring costs per command → docs/results/measure-bench.txt
#
# BenchmarkStore is every design × (Increment and TransferMoney × 3
# parallelisms × 3 critical sections, GetValue, GetBalance, Put, Get × 3
# parallelisms), plus atomic's counter rows.
#
# Rounds, not -count: each round is one `go test -count 1` over every design,
# and BENCH_STORE_ROUNDS rounds run one after another, so the designs of a row
# run seconds apart in every round and the machine's drift falls on all of
# them alike (-count N would run one design's N runs back to back). benchreport
# pairs round i of one design with round i of another; 10 rounds give the
# median a 95% interval (benchmath needs 6) and the paired ratios room to
# separate designs. The rounds' raw output is concatenated: benchstat and
# benchreport read a repeated name as one more run.
#
# -cpu: 1, 2, and every power of two up to the machine's CPUs, and the
# machine's own count if it is not one (benchreport -cpu-list $(nproc)). Set
# BENCH_STORE_CPUS to choose.
#
# Time: benchmarks × CPU counts × rounds × (BENCH_STORE_TIME + ramp-up and
# set-up); go test grows b.N up to the goal and overshoots it by a fifth.
# The rounds cost the benchtime, and 10 × 50ms measure a row nearly as long
# as 6 × 100ms would. BENCH_STORE_RUN is the -bench regexp:
# `BENCH_STORE_RUN='Store/op=Increment$/work=0s' BENCH_STORE_TIME=1x
# BENCH_STORE_ROUNDS=2 make bench-store` is a smoke run of a few rows.
# The raw output is kept beside the report gzipped (bench.txt.gz): it would be
# over the size limit for committed files (internal/housecheck) as text.
# benchreport reads it as it is; benchstat after zcat.
#
# The runtimes: BENCH_RUNTIMES' toolchains in turn inside every round (so
# the machine's drift falls on both alike), the hot counter and transfers
# without work, then benchstat's comparison (Mann–Whitney U, 95%
# intervals). The go command fetches a toolchain through the module proxy
# the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
store | runtimes | measure) ;;
*)
	echo "usage: scripts/bench.sh store|runtimes|measure" >&2
	exit 2
	;;
esac
GO=${GO:-go}
BENCHSTAT=${BENCHSTAT:-bin/benchstat}
mkdir -p bin

given=()
for v in BENCH_STORE_TIME BENCH_STORE_ROUNDS BENCH_STORE_CPUS BENCH_STORE_RUN; do
	[[ -v $v ]] && given+=("$v='${!v}'")
done
time=${BENCH_STORE_TIME:-50ms}
rounds=${BENCH_STORE_ROUNDS:-10}
cpus=${BENCH_STORE_CPUS:-$($GO run ./cmd/benchreport -cpu-list "$(nproc)")}
run=${BENCH_STORE_RUN:-Store}
[[ -n $cpus ]] || { echo "bench.sh: no CPU list (BENCH_STORE_CPUS)" >&2; exit 2; }

store() {
	local out=${BENCH_STORE_OUT:-docs/results/store}
	mkdir -p "$out"
	rm -f bin/bench-store.txt
	for round in $(seq 1 "$rounds"); do
		echo "bench-store: round $round of $rounds, -cpu $cpus" >&2
		$GO test -run '^$' -bench "$run" -benchmem -benchtime "$time" -cpu "$cpus" -count 1 -timeout 30m ./store | tee -a bin/bench-store.txt
	done
	rm -f "$out/bench.txt"
	gzip -9n <bin/bench-store.txt >"$out/bench.txt.gz"
	$GO run ./cmd/benchreport -command "$(echo make bench-store "${given[@]}")" -out "$out" bin/bench-store.txt
	echo "bench-store: $out/store.md"
}

runtimes() {
	local out=docs/results/runtimes/store
	local toolchains=(${BENCH_RUNTIMES:-go1.26.8 go1.27.3})
	local rrun=${BENCH_RUNTIMES_RUN:-'Store/op=(Increment|TransferMoney)$/work=0s/'}
	mkdir -p "$out"
	for tc in "${toolchains[@]}"; do rm -f "bin/bench-store-$tc.txt"; GOTOOLCHAIN=$tc $GO version || exit 2; done
	for round in $(seq 1 "$rounds"); do
		for tc in "${toolchains[@]}"; do
			echo "bench-store-runtimes: round $round of $rounds, $tc, -cpu $cpus" >&2
			GOTOOLCHAIN=$tc $GO test -run '^$' -bench "$rrun" -benchmem -benchtime "$time" -cpu "$cpus" -count 1 -timeout 30m ./store >>"bin/bench-store-$tc.txt"
		done
	done
	local args=()
	for tc in "${toolchains[@]}"; do
		gzip -9n <"bin/bench-store-$tc.txt" >"$out/$tc.txt.gz"
		args+=("$tc=bin/bench-store-$tc.txt")
	done
	{
		echo "# make bench-store-runtimes: BenchmarkStore -bench '$rrun' -cpu $cpus, $rounds rounds, each built by ${toolchains[*]}; raw output in <toolchain>.txt.gz"
		"$BENCHSTAT" "${args[@]}"
	} >"$out/benchstat.txt"
	echo "bench-store-runtimes: $out/benchstat.txt"
}

# measure: the same increments through a bare store, with its serial demand
# measured, with its store time measured (every command or 1 in 16), and
# with both as the server runs them.
measure() {
	$GO test -run '^$' -bench MeasuredStore -benchmem -cpu 2 -count 6 -benchtime 200ms ./server | tee bin/bench-measure.txt
	tr -s ' \t' ' ' <bin/bench-measure.txt >docs/results/measure-bench.raw.txt
	{
		echo '# make bench-measure: BenchmarkMeasuredStore (server/measure_bench_test.go), benchstat -col /measure -row /design,/par; raw output in measure-bench.raw.txt'
		"$BENCHSTAT" -col /measure -row /design,/par bin/bench-measure.txt
	} >docs/results/measure-bench.txt
}

"$1"
