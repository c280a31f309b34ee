#!/usr/bin/env bash
# cachegrind.sh prints the instructions per problem of one training step's
# bookkeeping (the root package's BenchmarkStep/problems=B/spiral: plan +
# gated credit at the paper's 8/4/4/4, on fresh inputs), counted by
# valgrind's cachegrind, for a batch of 256 problems and for one problem,
# and of its two parts at 256 (BenchmarkStepParts: planning and credit).
#
#	bench/cachegrind.sh [benchmark problems]...
#
# Each argument pair names a root-package benchmark by its full name (such
# as BenchmarkStep/problems=256/spiral) and the problems one of its
# iterations handles; without arguments, the four above. Each count is the
# difference of two runs of the test binary, of N and 2N iterations,
# divided by N times the problems: what the runs share (start-up, building
# the pool of inputs) cancels. Instruction counts are the same from run to
# run within a few parts in 10,000, unlike times on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	set -- BenchmarkStep/problems=256/spiral 256 BenchmarkStep/problems=1/spiral 1 \
		BenchmarkStepParts/problems=256/plan 256 BenchmarkStepParts/problems=256/credit 256
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

# irefs ITERS NAME prints the instructions cachegrind counts for ITERS
# iterations of the benchmark NAME. A run in which the test binary does not
# exit cleanly (under valgrind the Go runtime now and then stops on an
# instruction valgrind does not emulate) is not counted but run again, at
# most six times.
irefs() {
	local pattern out try
	pattern=$(echo "$2" | sed 's|[^/]*|^&$|g')
	for try in 1 2 3 4 5 6; do
		if out=$(GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			--error-exitcode=1 "$tmp/spiral.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$1x" 2>&1 >/dev/null); then
			echo "$out" | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
			return
		fi
	done
	echo "cachegrind.sh: $2 did not run cleanly under valgrind six times" >&2
	return 1
}

while [ $# -ge 2 ]; do
	name=$1 b=$2
	shift 2
	n=$((b == 1 ? 20000 : 200))
	lo=$(irefs "$n" "$name")
	hi=$(irefs "$((2 * n))" "$name")
	awk -v name="$name" -v b="$b" -v n="$n" -v lo="$lo" -v hi="$hi" 'BEGIN {
		printf "%-40s %8.0f instructions a problem\n", name, (hi - lo) / (n * b)
	}'
done
