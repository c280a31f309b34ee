#!/usr/bin/env bash
# numpy.sh times one training step's bookkeeping at the paper's 8/4/4/4
# (plan + gated credit) in Go and in a numpy peer, interleaved in one run,
# and prints the medians and their ratio, for a batch of 256 problems and
# for one problem.
#
#	bench/numpy.sh [peer.py] [rounds]
#
# peer.py (default ../shared/bench/peer_numpy.py) prints the median seconds
# per batch of B problems over R repeats when run as "peer.py B R"; it is
# run with /usr/bin/python3 (Debian's python3-numpy), without the
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE variables. The Go side is the root
# package's BenchmarkStep/problems=B/spiral, in runs of a quarter as many
# iterations as the peer's repeats.
#
# Two figures per size. "wall": the peer's own median (wall-clock) against
# the median over every Go run of ns/op. "cpu": the CPU time of the
# calling thread, which a machine shared with other work does not inflate:
# the median over R repeats of the peer's step() timed with
# time.thread_time_ns, against the median of Go's cpu-ns/op.
set -euo pipefail
cd "$(dirname "$0")/.."
peer=$(realpath "${1:-../shared/bench/peer_numpy.py}")
rounds=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/spiral.test" . >/dev/null

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# peercpu B R prints the peer's step CPU time per repeat, in ns, R lines.
peercpu() {
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 - "$peer" "$1" "$2" <<'EOF'
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("peer", sys.argv[1])
peer = importlib.util.module_from_spec(spec); spec.loader.exec_module(peer)
B, R = int(sys.argv[2]), int(sys.argv[3])
rng, combos, member, rewards = peer.make(B)
peer.step(rng, combos, member, rewards)
for _ in range(R):
    t = time.thread_time_ns(); peer.step(rng, combos, member, rewards)
    print(time.thread_time_ns() - t)
EOF
}

for r in $(seq "$rounds"); do
	for b in 256 1; do
		reps=200
		[ "$b" = 1 ] && reps=5000
		# Many short runs, as the peer times many repeats: a run that the
		# scheduler preempted is an outlier the median drops.
		"$tmp/spiral.test" -test.run '^$' -test.bench "^BenchmarkStep\$/^problems=$b\$/^spiral\$" -test.benchtime "$((reps / 4))x" -test.count 9 |
			awk '/ns\/op/ {print $3 >> "'"$tmp/go.$b"'"; print $5 >> "'"$tmp/gocpu.$b"'"}'
		env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$peer" "$b" "$reps" |
			awk '{printf "%.1f\n", $1 * 1e9}' >>"$tmp/py.$b"
		peercpu "$b" "$reps" | median >>"$tmp/pycpu.$b"
	done
	echo "round $r of $rounds done" >&2
done

for b in 256 1; do
	for kind in wall cpu; do
		if [ $kind = wall ]; then g=$(median <"$tmp/go.$b"); p=$(median <"$tmp/py.$b"); else g=$(median <"$tmp/gocpu.$b"); p=$(median <"$tmp/pycpu.$b"); fi
		awk -v b="$b" -v k="$kind" -v g="$g" -v p="$p" 'BEGIN {
			printf "problems=%-4d %-4s go %10.0f ns  numpy %10.0f ns  numpy/go %6.1fx\n", b, k, g, p, p / g
		}'
	done
done
