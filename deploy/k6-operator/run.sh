#!/usr/bin/env bash
# Runs locklab's k6 scripts on k6-operator (README.md, "Beyond one machine"):
#
#   deploy/k6-operator/run.sh counter   # or bank; after editing target.yaml
#   deploy/k6-operator/run.sh archive DIR   # only build the archives into DIR
#                                           # (make e2e runs them locally)
#
# It archives the scripts with the pinned k6 (`k6 archive`: the script, its
# modules and the .proto in one tarball), stores the archives in the
# ConfigMap locklab-k6, resets the server once with the reset Job, waits for
# it, and applies the TestRun. Environment: K6 (default bin/k6), KUBECTL
# (kubectl). Options that depend on the environment (MODEL, RATE, ...) must be
# given here, as `k6 archive` freezes them: e.g. ARCHIVE_ENV="-e MODEL=open
# -e RATE=20000 -e MAX_VUS=2000".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K6=${K6:-$root/bin/k6}
KUBECTL=${KUBECTL:-kubectl}
which=${1:?usage: run.sh counter|bank|archive DIR}

# archive DIR: the scripts a TestRun or the reset Job runs, each with its
# modules and the .proto, as DIR/<name>.tar.
archive() {
	local dir=$1
	mkdir -p "$dir"
	(
		cd "$root"
		# shellcheck disable=SC2086 # ARCHIVE_ENV is a list of -e flags
		for s in testingscript.js k6/bank.js k6/reset.js; do
			"$K6" archive --quiet ${ARCHIVE_ENV:-} -O "$dir/$(basename "$s" .js).tar" "$s"
		done
	)
}

case $which in
archive)
	archive "$(mkdir -p "${2:?usage: run.sh archive DIR}" && cd "$2" && pwd)"
	exit 0
	;;
counter | bank) ;;
*)
	echo "run.sh: want counter, bank or archive DIR, not $which" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
archive "$tmp"
"$KUBECTL" create configmap locklab-k6 --from-file="$tmp/testingscript.tar" \
	--from-file="$tmp/bank.tar" --from-file="$tmp/reset.tar" --dry-run=client -o yaml | "$KUBECTL" apply -f -
"$KUBECTL" apply -f "$here/target.yaml"
"$KUBECTL" delete job locklab-reset --ignore-not-found
"$KUBECTL" apply -f "$here/reset-job.yaml"
"$KUBECTL" wait --for=condition=complete job/locklab-reset --timeout=120s
"$KUBECTL" delete testrun "locklab-$which" --ignore-not-found
"$KUBECTL" apply -f "$here/testrun-$which.yaml"
echo "run.sh: TestRun locklab-$which applied; follow it with: $KUBECTL get testrun locklab-$which -w"
