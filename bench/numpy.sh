#!/usr/bin/env bash
# numpy.sh times one training step's bookkeeping at the paper's 8/4/4/4
# (plan + gated credit) in Go and in a numpy peer, interleaved in one run,
# and prints the median of each and their ratio, for a batch of 256 problems
# and for one problem.
#
#	bench/numpy.sh [peer.py] [rounds]
#
# peer.py (default ../shared/bench/peer_numpy.py) prints the median seconds
# per batch of B problems over R repeats when run as "peer.py B R"; it is
# run with /usr/bin/python3 (Debian's python3-numpy), without the
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE variables. The Go side is the root
# package's BenchmarkStep/problems=B/spiral (wall-clock ns/op, as the peer's
# figure is wall-clock).
set -euo pipefail
cd "$(dirname "$0")/.."
peer=${1:-../shared/bench/peer_numpy.py}
rounds=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for r in $(seq "$rounds"); do
	for b in 256 1; do
		"$tmp/spiral.test" -test.run '^$' -test.bench "^BenchmarkStep\$/^problems=$b\$/^spiral\$" -test.benchtime 1s -test.count 1 |
			awk '/ns\/op/ {print $3}' >>"$tmp/go.$b"
		reps=200
		[ "$b" = 1 ] && reps=5000
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$peer" "$b" "$reps" |
			awk '{printf "%.1f\n", $1 * 1e9}' >>"$tmp/py.$b"
	done
	echo "round $r of $rounds done" >&2
done

for b in 256 1; do
	g=$(median <"$tmp/go.$b")
	p=$(median <"$tmp/py.$b")
	awk -v b="$b" -v g="$g" -v p="$p" -v r="$rounds" 'BEGIN {
		printf "problems=%-4d go %12.0f ns  numpy %12.0f ns  numpy/go %6.1fx  (medians of %d rounds)\n", b, g, p, p / g, r
	}'
done
