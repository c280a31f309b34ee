#!/usr/bin/env bash
# cachegrind.sh prints the instructions per problem of one training step's
# bookkeeping (BenchmarkStep/problems=B/spiral of the root package: plan +
# gated credit at the paper's 8/4/4/4, on fresh inputs), counted by
# valgrind's cachegrind, for a batch of 256 problems and for one problem.
#
#	bench/cachegrind.sh [benchmark]
#
# benchmark (default BenchmarkStep) may name another benchmark of the root
# package with the same problems=B/spiral sub-benchmarks. Each count is the
# difference of two runs of the test binary, of N and 2N iterations, divided
# by N*B: what the runs share (start-up, building the pool of inputs) cancels.
# Instruction counts are the same from run to run within a few parts in
# 10,000, unlike times on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-BenchmarkStep}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

# irefs ITERS B prints the instructions cachegrind counts for ITERS
# iterations of the benchmark at B problems.
irefs() {
	GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$tmp/spiral.test" -test.run '^$' -test.bench "^$bench\$/^problems=$2\$/^spiral\$" -test.benchtime "$1x" 2>&1 >/dev/null |
		awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
}

for b in 256 1; do
	n=$((b == 1 ? 20000 : 200))
	lo=$(irefs "$n" "$b")
	hi=$(irefs "$((2 * n))" "$b")
	awk -v b="$b" -v n="$n" -v lo="$lo" -v hi="$hi" 'BEGIN {
		printf "problems=%-4d %8.0f instructions a problem\n", b, (hi - lo) / (n * b)
	}'
done
