#!/usr/bin/env bash
# A bursty background load, the validity gate's own trial (docs/validity.md):
# a busy loop on every CPU, on for BURST_ON of every BURST_EVERY seconds.
#
#   scripts/burst.sh CMD ARGS...   run CMD beside the load; the load stops with it
#   scripts/burst.sh               the load alone, until the process group is signalled
#
# make compare-busy runs the first form; a study row with Burst (the runner,
# `-study busy`) the second, in a process group it stops at the end.
set -euo pipefail
on=${BURST_ON:-1.5}
every=${BURST_EVERY:-6}
if ! awk -v on="$on" -v every="$every" 'BEGIN { exit !(on > 0 && every > on) }'; then
	echo "burst.sh: want 0 < BURST_ON < BURST_EVERY (seconds), got $on and $every" >&2
	exit 2
fi

load() {
	while :; do
		for _ in $(seq "$(nproc)"); do timeout --foreground "$on" sh -c 'while :; do :; done' & done
		wait
		sleep "$(awk -v on="$on" -v every="$every" 'BEGIN { print every - on }')"
	done
}

if [ $# -eq 0 ]; then
	load
fi
set -m
load &
burst=$!
trap 'kill -- -$burst 2>/dev/null || true' EXIT
"$@"
