#!/usr/bin/env bash
# compare.sh times one training step's bookkeeping at the paper's 8/4/4/4
# (plan + gated credit, on fresh inputs) in Go and in the numpy peer
# bench/peer.py, which does the same work, interleaved in one run, and
# prints the medians and their ratio, for a batch of 256 problems and for
# one problem.
#
#	bench/compare.sh [rounds [benchmark]...]
#
# Each round runs, for each size, the root package's
# BenchmarkStep/problems=B/spiral in short runs of a fresh process, then the
# peer for as many steps, each step on the next input of a pool of 4096
# problems in all (as the Go benchmark does). The peer runs with
# /usr/bin/python3 (Debian's python3-numpy), without the OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE variables.
#
# Two figures per size. "cpu": the CPU time of the calling thread, which a
# machine shared with other work does not inflate: the median over every Go
# run of cpu-ns/op against the median over the peer's steps of
# time.thread_time_ns. "wall": the same with wall-clock time.
#
# Benchmarks named after the rounds, each with %d for the problems (such as
# BenchmarkStepPlainLoop/problems=%d), run in each round in place of
# BenchmarkStep/problems=%d/spiral, one after the other, against the same
# peer runs; each gets its lines.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift $(($# > 0))
if [ $# -eq 0 ]; then
	set -- 'BenchmarkStep/problems=%d/spiral'
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for r in $(seq "$rounds"); do
	for b in 256 1; do
		steps=$((b == 1 ? 4000 : 200))
		pool=$((b == 1 ? 4096 : 16))
		g=0
		for name in "$@"; do
			g=$((g + 1))
			pattern=$(printf "$name" "$b" | sed 's|[^/]*|^&$|g')
			"$tmp/spiral.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$((steps / 4))x" -test.count 9 |
				awk '/ns\/op/ {print $3 >> "'"$tmp/go$g.$b"'"; print $5 >> "'"$tmp/gocpu$g.$b"'"}'
		done
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peer.py "$b" "$steps" "$pool" |
			awk '{print $1 >> "'"$tmp/pycpu.$b"'"; print $2 >> "'"$tmp/py.$b"'"}'
	done
	echo "round $r of $rounds done" >&2
done

g=0
for name in "$@"; do
	g=$((g + 1))
	[ $# -eq 1 ] || echo "$name"
	for b in 256 1; do
		for kind in cpu wall; do
			if [ $kind = wall ]; then t=$(median <"$tmp/go$g.$b"); p=$(median <"$tmp/py.$b"); else t=$(median <"$tmp/gocpu$g.$b"); p=$(median <"$tmp/pycpu.$b"); fi
			awk -v b="$b" -v k="$kind" -v g="$t" -v p="$p" 'BEGIN {
				printf "problems=%-4d %-4s go %10.0f ns  numpy %10.0f ns  numpy/go %6.1fx\n", b, k, g, p, p / g
			}'
		done
	done
done
