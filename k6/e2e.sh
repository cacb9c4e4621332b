#!/usr/bin/env bash
# End-to-end test of the load harness (`make e2e`): builds the server and the
# Go load driver, starts the server in every mode on a free loopback port, runs
# a short smoke of every k6 script (uniform and skewed) and of the Go driver
# against it, checks the invariants through the API with k6/verify.js (which
# reads both drivers' locklab.load-summary/v1), runs a test split in two
# --execution-segment processes, and stops the server, which must exit 0. Any failed check, unexpected error or violated invariant
# fails it. Logs and JSON summaries stay in k6/out/e2e/ (git-ignored).
#
# The modes run E2E_JOBS at a time (default 6), each with its own server,
# port and files, needing nothing of each other: a smoke lasts a fixed time
# whatever CPU it gets, so six modes side by side take little more than one
# (each makes fewer calls in its windows; every check is the same), and the
# ten modes take two rounds of smokes, not four.
# Each mode's lines are printed together when it ends.
#
# ghz (the bank seed's tool) runs the counter and the bank's transfers in
# every mode too, through `cmd/seeds ghz-run`, which turns its report into the
# same summary.
#
# Environment: K6 (bin/k6), GO (go), SERVER (bin/locklab, built here),
# LOAD (bin/load, the Go driver, built here), GHZ (bin/ghz, make ghz),
# SEEDS (bin/seeds, cmd/seeds, built here),
# E2E_MODES (default: every mode `locklab -list-modes` lists),
# E2E_SEEDS_RACE (set: cmd/seeds built with -race into k6/out/e2e, not
# bin/seeds; make test sets it, after go test -race has compiled every
# package cmd/seeds imports that way: a link instead of compiling the lab's
# packages again without -race; ghz-run's own work is small),
# E2E_SECONDS (length of each smoke, default 2), E2E_JOBS (modes at once,
# default 6, or all, as make test runs them; 1 with E2E_AGREE, which
# measures), E2E_AGREE (a fraction, e.g. 0.15: also check that k6, the Go
# driver and ghz agree on calls/s and p50 within it, in the open model at
# E2E_AGREE_RATE calls/s (1000) for E2E_AGREE_SECONDS (5); `make agree`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
K6=${K6:-$root/bin/k6}
GO=${GO:-go}
SERVER=${SERVER:-$root/bin/locklab}
LOAD=${LOAD:-$root/bin/load}
GHZ=${GHZ:-$root/bin/ghz}
SEEDS=${SEEDS:-$root/bin/seeds}
export GHZ
secs=${E2E_SECONDS:-2}
out=$root/k6/out/e2e
rm -rf "$out"
mkdir -p "$out"
started=$SECONDS

log() { printf 'e2e %3ds: %s\n' $((SECONDS - started)) "$*"; }
die() {
	printf 'e2e: FAIL: %s\n' "$*" >&2
	exit 1
}

if [[ -z ${SKIP_BUILD:-} ]]; then
	log "building the server into $SERVER"
	"$GO" build -o "$SERVER" .
	log "building the Go load driver into $LOAD"
	"$GO" build -o "$LOAD" ./cmd/load
	if [[ -n ${E2E_SEEDS_RACE:-} ]]; then
		SEEDS=$out/seeds
		log "building cmd/seeds (ghz-run) with -race into $SEEDS"
		"$GO" build -race -o "$SEEDS" ./cmd/seeds
	else
		log "building cmd/seeds (ghz-run) into $SEEDS"
		"$GO" build -o "$SEEDS" ./cmd/seeds
	fi
fi
[[ -x $K6 ]] || die "no k6 at $K6 (make k6)"
[[ -x $GHZ ]] || die "no ghz at $GHZ (make ghz)"

# The modes and the workloads each serves, from the server's registry
# (`locklab -list-modes`: "mode workload…" per line); E2E_MODES narrows them.
declare -A serves=()
modes=()
while read -r m wls; do
	serves[$m]=" $wls "
	modes+=("$m")
done < <("$SERVER" -list-modes)
((${#modes[@]} > 0)) || die "'$SERVER -list-modes' listed no mode"
if [[ -n ${E2E_MODES:-} ]]; then
	read -r -a modes <<<"$E2E_MODES"
	for m in "${modes[@]}"; do [[ -n ${serves[$m]:-} ]] || die "E2E_MODES: the server has no mode $m"; done
fi
# served WORKLOAD [MODE]: does the mode (default: the current one) serve it?
served() { [[ ${serves[${2:-$mode}]} == *" $1 "* ]]; }
jobs=${E2E_JOBS:-6}
[[ $jobs != all ]] || jobs=${#modes[@]}
[[ -z ${E2E_AGREE:-} ]] || jobs=1
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "E2E_JOBS=$jobs: want a count of modes to run at once, 1 or more, or all"
log "modes: ${modes[*]} ($jobs at once)"

# What runs once, not in every mode, is given to one mode beforehand: the
# k6-operator archives to the first mode that serves the counter and the
# bank, the negative control to the first stateful mode that serves kv.
archive_mode="" negative_mode=""
for m in "${modes[@]}"; do
	if [[ -z $archive_mode ]] && served counter "$m" && served bank "$m"; then archive_mode=$m; fi
	if [[ -z $negative_mode && $m != noop ]] && served kv "$m"; then negative_mode=$m; fi
done

srv_pid=""
main_pid=$BASHPID
stop_server() {
	# Only the mode's shell owns the server (not the subshells of `k6run &`).
	[[ -n $srv_pid && $BASHPID == "$main_pid" ]] || return 0
	local pid=$srv_pid rc=0
	srv_pid=""
	kill -TERM "$pid" 2>/dev/null || true
	# The server stops gracefully (GracefulStop with a deadline): give it 15 s.
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		die "server (pid $pid) still running 15 s after SIGTERM"
	fi
	wait "$pid" || rc=$?
	[[ $rc == 0 ]] || die "server exited $rc after SIGTERM, want 0 (see $out/$mode.server.log)"
}
trap 'stop_server' EXIT

# start_server MODE: starts the server on a free port and sets $addr from its
# one line, "locklab: mode=<mode> listening on <host:port>".
start_server() {
	local slog=$out/$1.server.log
	# The log exists before the server starts: the background job opens it
	# only when it is scheduled, and a sed on a missing file would end the
	# script (set -e) and SIGTERM a server that has not set up its handler.
	: >"$slog"
	"$SERVER" -mode "$1" -addr 127.0.0.1:0 2>"$slog" &
	srv_pid=$!
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's/^locklab: mode=.* listening on \([^ ]*\)$/\1/p' "$slog" | head -n 1)
		[[ -n $addr ]] && break
		kill -0 "$srv_pid" 2>/dev/null || die "server -mode $1 exited: $(cat "$slog")"
		sleep 0.1
	done
	[[ -n $addr ]] || die "server -mode $1 printed no listening line in 10 s: $(cat "$slog")"
}

# k6run NAME SCRIPT [VAR=value…] [-- k6 flags…]: one k6 run whose JSON
# summary goes to $out/$mode.NAME.json; fails on a non-zero exit.
k6run() {
	local name=$1 script=$2
	shift 2
	local vars=() flags=()
	while (($#)); do
		if [[ $1 == -- ]]; then
			shift
			flags=("$@")
			break
		fi
		vars+=("$1")
		shift
	done
	local base=$out/$mode.$name
	if ! env ADDR="$addr" SUMMARY_JSON="$base.json" "${vars[@]}" \
		"$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 "${flags[@]}" "$script" \
		>"$base.log" 2>&1; then
		tail -n 40 "$base.log" >&2
		die "$mode: k6 $name ($script ${vars[*]} ${flags[*]}) failed, see $base.log"
	fi
}

# gorun NAME [flags…]: one Go driver run whose summary goes to
# $out/$mode.NAME.json; fails on a non-zero exit (an unexpected answer).
gorun() {
	local name=$1
	shift
	local base=$out/$mode.$name
	if ! "$LOAD" -addr "$addr" -warmup 200ms -duration "${secs}s" -out "$base.json" "$@" >"$base.log" 2>&1; then
		cat "$base.log" >&2
		die "$mode: Go driver $name ($*) failed, see $base.log"
	fi
}

# ghzrun NAME WORKLOAD CASE SCENARIO [ghz flags…]: one ghz run whose summary
# goes to $out/$mode.NAME.json; fails on a non-zero exit (an unexpected
# answer, or a ghz of another version than the pinned one).
ghzrun() {
	local name=$1 workload=$2 case=$3 scenario=$4
	shift 4
	local base=$out/$mode.$name
	if ! "$SEEDS" ghz-run -workload "$workload" -case "$case" -scenario "$scenario" -addr "$addr" -out "$base.json" -- "$@" >"$base.log" 2>&1; then
		cat "$base.log" >&2
		die "$mode: ghz $name ($workload/$case $*) failed, see $base.log"
	fi
}

# reset SCENARIO: AdminService/Reset through k6/reset.js, counter to 0.
reset() {
	env ADDR="$addr" SCENARIO="$1" "$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 k6/reset.js \
		>"$out/$mode.reset-$1.log" 2>&1 || die "$mode: reset to $1 failed, see $out/$mode.reset-$1.log"
}

# verify NAME [VAR=value…]: k6/verify.js against the running server.
verify() {
	local name=$1
	shift
	local base=$out/$mode.verify-$name
	if ! env ADDR="$addr" EXPECT_MODE="$mode" "$@" \
		"$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 k6/verify.js \
		>"$base.log" 2>&1; then
		cat "$base.log" >&2
		die "$mode: invariants violated after $name, see $base.log"
	fi
	if grep -q 'keeps no state' "$base.log"; then stateless=" (mode keeps no state: summaries checked, invariants n/a)"; else stateless=""; fi
}

seg=(--execution-segment-sequence 0,1/2,1)
s() { echo "$out/$mode.$1.json"; }

# run_mode MODE: every check of one mode, against a server of its own. It
# runs in a shell of its own (run_modes), which owns that server.
run_mode() {
	mode=$1
	main_pid=$BASHPID
	trap 'stop_server' EXIT
	trap 'exit 143' TERM # run_modes stops the others when one fails
	start_server "$mode"
	log "$mode: server on $addr"

	# The counter, from a fresh server (counter 0): the default script in the
	# closed model, then k6/counter.js in the open model.
	if served counter; then
		k6run root testingscript.js VUS=3 DURATION=${secs}s CHECK_BODY=1
		k6run counter-open k6/counter.js MODEL=open RATE=300 PRE_VUS=4 MAX_VUS=8 DURATION=${secs}s
		verify counter SUMMARIES="$(s root),$(s counter-open)" CHECK_COUNTER=1
		log "$mode: testingscript.js, counter.js (open model): counter == acknowledged increments$stateless"
	fi

	if served kv; then
		k6run kv k6/kv.js VUS=3 DURATION=${secs}s READ_RATIO=0.5 CHECK_BODY=1
		verify kv SUMMARIES="$(s kv)"
		log "$mode: kv.js: every Put and Get version consistent$stateless"
	fi

	# Bank: setup() resets to the scenario; every case, mixed.
	if served bank; then
		k6run bank-A k6/bank.js SCENARIO=A VUS=4 DURATION=${secs}s CHECK_BODY=1
		verify bank-A SUMMARIES="$(s bank-A)" EXPECT_BANK=A
		k6run bank-B k6/bank.js SCENARIO=B VUS=4 DURATION=${secs}s CHECK_BODY=1
		verify bank-B SUMMARIES="$(s bank-B)" EXPECT_BANK=B EXPECT_REFUSALS=1
		log "$mode: bank.js scenarios A and B: money conserved, refusals counted in B$stateless"
	fi

	# Skewed (Zipf θ 0.99) and with a read ratio, from the same
	# load/workloads.json as the Go driver: hot accounts, shared hot keys.
	if served bank; then
		k6run bank-skew k6/bank.js SCENARIO=A VUS=4 DURATION=${secs}s SKEW=0.99 READ_RATIO=0.5 CHECK_BODY=1
		verify bank-skew SUMMARIES="$(s bank-skew)" EXPECT_BANK=A
		log "$mode: bank.js with SKEW=0.99 READ_RATIO=0.5: money conserved$stateless"
	fi
	if served kv; then
		k6run kv-skew k6/kv.js VUS=3 DURATION=${secs}s SKEW=0.99 READ_RATIO=0.5 CHECK_BODY=1
		verify kv-skew SUMMARIES="$(s kv-skew)"
		log "$mode: kv.js with SKEW=0.99 READ_RATIO=0.5: shared keys' versions only grow$stateless"
	fi

	# The Go driver (cmd/load), both models, checked by the same verify.js.
	if served counter; then
		gorun go-counter -workload counter -reset -callers 3
		verify go-counter SUMMARIES="$(s go-counter)" CHECK_COUNTER=1
		log "$mode: Go driver, counter: counter == acknowledged increments$stateless"
	fi
	if served bank; then
		gorun go-bank -workload bank -scenario B -reset -callers 4 -model open -rate 500 -skew 0.99
		verify go-bank SUMMARIES="$(s go-bank)" EXPECT_BANK=B EXPECT_REFUSALS=1
		log "$mode: Go driver, bank B open and skewed: money conserved, refusals counted$stateless"
	fi
	if served kv; then
		gorun go-kv -workload kv -callers 3 -skew 0.99 -read-ratio 0.5
		verify go-kv SUMMARIES="$(s go-kv)"
		log "$mode: Go driver, kv skewed: shared keys' versions only grow$stateless"
	fi

	# ghz, from a reset server: the counter for E2E_SECONDS with every call in
	# flight at the end waited for (so the check is exact), then transfers in
	# scenario B, refusals counted.
	if served counter || served bank; then
		reset B
	fi
	if served counter; then
		ghzrun ghz-counter counter increment "" -c 3 --connections 1 -z "${secs}s" --duration-stop wait
		verify ghz-counter SUMMARIES="$(s ghz-counter)" CHECK_COUNTER=1
		log "$mode: ghz, counter: counter == acknowledged increments$stateless"
	fi
	if served bank; then
		ghzrun ghz-bank bank transfer B -c 4 --connections 2 -n 400
		verify ghz-bank SUMMARIES="$(s ghz-bank)" EXPECT_BANK=B EXPECT_REFUSALS=1
		log "$mode: ghz, bank B transfers: money conserved, refusals counted$stateless"
	fi

	# The drivers' agreement check, on demand: the same open-model load from
	# every driver, at a rate all sustain, must give the same figures.
	if [[ -n ${E2E_AGREE:-} ]] && served counter; then
		rate=${E2E_AGREE_RATE:-1000}
		asecs=${E2E_AGREE_SECONDS:-5}
		k6run agree-k6 k6/counter.js MODEL=open RATE="$rate" PRE_VUS=50 MAX_VUS=100 DURATION="${asecs}s"
		secs=$asecs gorun agree-go -workload counter -model open -rate "$rate" -callers 100
		ghzrun agree-ghz counter increment "" --rps "$rate" --async -c 100 --connections 4 -z "${asecs}s" --duration-stop wait
		verify agree SUMMARIES="$(s agree-k6),$(s agree-go),$(s agree-ghz)" AGREE="$E2E_AGREE"
		log "$mode: k6, the Go driver and ghz agree within $E2E_AGREE at $rate calls/s: $(grep -h 'agree on' "$out/$mode.verify-agree.log" | tr -s ' ' | tr '\n' ';')"
	fi

	# One test split in two k6 processes run at once, as k6-operator would:
	# reset once (every process runs setup(), so the scripts must not), then
	# every served workload as two concurrent segments.
	env ADDR="$addr" SCENARIO=B "$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 \
		k6/reset.js >"$out/$mode.reset.log" 2>&1 || die "$mode: reset failed, see $out/$mode.reset.log"
	sums=() checks=()
	for w in counter bank kv; do
		served "$w" || continue
		k6run "seg0-$w" "k6/$w.js" VUS=4 DURATION=${secs}s RESET=0 SCENARIO=B CHECK_BODY=1 \
			-- --execution-segment 0:1/2 "${seg[@]}" &
		p0=$!
		k6run "seg1-$w" "k6/$w.js" VUS=4 DURATION=${secs}s RESET=0 SCENARIO=B CHECK_BODY=1 \
			-- --execution-segment 1/2:1 "${seg[@]}" &
		p1=$!
		wait "$p0" || die "$mode: segment 0 of $w failed"
		wait "$p1" || die "$mode: segment 1 of $w failed"
		sums+=("$(s "seg0-$w")" "$(s "seg1-$w")")
		case $w in
		counter) checks+=(CHECK_COUNTER=1) ;;
		bank) checks+=(EXPECT_BANK=B EXPECT_REFUSALS=1) ;;
		esac
	done
	verify segments "${checks[@]}" SUMMARIES="$(IFS=,; echo "${sums[*]}")"
	log "$mode: two --execution-segment processes: counter == both acknowledged sums, money conserved$stateless"

	# What k6-operator ships (deploy/k6-operator), once (it does not depend
	# on the mode): `k6 archive` tarballs made by its run.sh, the reset
	# archive once, then the counter and bank archives as two concurrent
	# segments with RESET=0; VUs and duration as k6 flags, because an archive
	# freezes the options it was made with.
	if [[ $mode == "$archive_mode" ]]; then
		archives=$out/archives
		K6="$K6" deploy/k6-operator/run.sh archive "$archives" >"$out/archive.log" 2>&1 ||
			die "deploy/k6-operator/run.sh archive failed, see $out/archive.log"
		env ADDR="$addr" SCENARIO=B "$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 \
			"$archives/reset.tar" >"$out/$mode.archive-reset.log" 2>&1 || die "$mode: reset.tar failed, see $out/$mode.archive-reset.log"
		for w in testingscript bank; do
			k6run "arc0-$w" "$archives/$w.tar" RESET=0 SCENARIO=B CHECK_BODY=1 \
				-- --vus 4 --duration "${secs}s" --execution-segment 0:1/2 "${seg[@]}" &
			p0=$!
			k6run "arc1-$w" "$archives/$w.tar" RESET=0 SCENARIO=B CHECK_BODY=1 \
				-- --vus 4 --duration "${secs}s" --execution-segment 1/2:1 "${seg[@]}" &
			p1=$!
			wait "$p0" || die "$mode: segment 0 of $w.tar failed"
			wait "$p1" || die "$mode: segment 1 of $w.tar failed"
		done
		verify archives CHECK_COUNTER=1 EXPECT_BANK=B EXPECT_REFUSALS=1 \
			SUMMARIES="$(s arc0-testingscript),$(s arc1-testingscript),$(s arc0-bank),$(s arc1-bank)"
		log "$mode: k6 archives (reset, testingscript, bank) as k6-operator runs them: counter and money checked$stateless"
	fi

	# The negative control, once: two kv processes that are NOT split share
	# VU ids, so their keys collide and the version checks must catch it —
	# proof that the segmented kv run above really kept its VUs apart.
	if [[ $mode == "$negative_mode" ]]; then
		pids=()
		for i in 0 1; do
			env ADDR="$addr" VUS=2 DURATION=${secs}s READ_RATIO=0.5 CHECK_BODY=1 \
				"$K6" run --quiet --no-color --no-usage-report --address 127.0.0.1:0 k6/kv.js \
				>"$out/$mode.overlap$i.log" 2>&1 &
			pids+=($!)
		done
		fails=0
		for p in "${pids[@]}"; do
			wait "$p" || fails=$((fails + 1))
		done
		((fails > 0)) || die "$mode: two unsplit kv processes shared keys and no check noticed"
		log "$mode: negative control: unsplit processes sharing VU ids are caught ($fails of 2 failed)"
	fi

	stop_server
	log "$mode: server stopped, exit 0"
}

# run_modes: every mode in a shell of its own, $jobs at once; each mode's
# lines are printed when it ends. The first mode to fail stops the rest.
run_modes() {
	local -A running=()
	local m pid rc failed=""
	finish() { # finish PID RC: print the mode's lines, note a failure
		local m=${running[$1]}
		unset 'running[$1]'
		cat "$out/$m.e2e.log"
		[[ $2 == 0 || -n $failed ]] || failed=$m # the first to fail
	}
	for m in "${modes[@]}"; do
		while ((${#running[@]} >= jobs)) && [[ -z $failed ]]; do
			rc=0
			wait -n -p pid "${!running[@]}" || rc=$?
			finish "$pid" "$rc"
		done
		[[ -z $failed ]] || break
		(run_mode "$m") >"$out/$m.e2e.log" 2>&1 &
		running[$!]=$m
	done
	while ((${#running[@]} > 0)); do
		if [[ -n $failed ]]; then
			for pid in "${!running[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
		fi
		rc=0
		wait -n -p pid "${!running[@]}" || rc=$?
		finish "$pid" "$rc"
	done
	[[ -z $failed ]] || die "$failed: see its lines above and $out/$failed.*.log"
}
run_modes

log "PASS (${modes[*]}; logs in ${out#"$root"/})"
