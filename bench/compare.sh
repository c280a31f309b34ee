#!/usr/bin/env bash
# compare.sh times one training step's bookkeeping at the paper's 8/4/4/4
# (plan + gated credit, on fresh inputs) in Go and in the numpy peer
# bench/peer.py, which does the same work, interleaved in one run, and
# prints the medians and their ratio, for a batch of 256 problems and for
# one problem.
#
#	bench/compare.sh [rounds]
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
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for r in $(seq "$rounds"); do
	for b in 256 1; do
		steps=$((b == 1 ? 4000 : 200))
		pool=$((b == 1 ? 4096 : 16))
		"$tmp/spiral.test" -test.run '^$' -test.bench "^BenchmarkStep\$/^problems=$b\$/^spiral\$" -test.benchtime "$((steps / 4))x" -test.count 9 |
			awk '/ns\/op/ {print $3 >> "'"$tmp/go.$b"'"; print $5 >> "'"$tmp/gocpu.$b"'"}'
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peer.py "$b" "$steps" "$pool" |
			awk '{print $1 >> "'"$tmp/pycpu.$b"'"; print $2 >> "'"$tmp/py.$b"'"}'
	done
	echo "round $r of $rounds done" >&2
done

for b in 256 1; do
	for kind in cpu wall; do
		if [ $kind = wall ]; then g=$(median <"$tmp/go.$b"); p=$(median <"$tmp/py.$b"); else g=$(median <"$tmp/gocpu.$b"); p=$(median <"$tmp/pycpu.$b"); fi
		awk -v b="$b" -v k="$kind" -v g="$g" -v p="$p" 'BEGIN {
			printf "problems=%-4d %-4s go %10.0f ns  numpy %10.0f ns  numpy/go %6.1fx\n", b, k, g, p, p / g
		}'
	done
done
