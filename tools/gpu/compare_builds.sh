#!/usr/bin/env bash
# Times training iterations of two gocaffe builds on the same GPU, rounds
# interleaved so that the machine's drift falls on both alike: the models
# of time_nets.py (DummyData, each at its batch), `gocaffe train -gpu 0`,
# the median iter/s of the display lines from iteration 100 on.
#
# usage: compare_builds.sh A_BINARY B_BINARY NETS_DIR [ROUNDS [MODELS...]]
#   (NETS_DIR written by tools/gpu/time_nets.py; -tf32 with TF32=1)
set -euo pipefail
a=$1 b=$2 nets=$3 rounds=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
models=${*:-lenet cifar10_quick caffenet googlenet resnet50 mobilenet}
extra=(); [ "${TF32:-0}" = 1 ] && extra=(-tf32)
rate() { # BINARY MODEL: the median iter/s from iteration 100 on
	"$1" train -solver "$nets/$2_time_solver.prototxt" -gpu 0 "${extra[@]}" 2>&1 |
		sed -n 's/.*Iteration \([0-9]*\) (\([0-9.]*\) iter\/s.*/\1 \2/p' |
		awk '$1 >= 100 {print $2}' | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "none"}'
}
printf '%-14s %-5s %10s %10s %7s\n' model round A_iter/s B_iter/s B/A
for m in $models; do
	for r in $(seq 1 "$rounds"); do
		ra=$(rate "$a" "$m") rb=$(rate "$b" "$m")
		printf '%-14s %-5s %10s %10s %7s\n' "$m" "$r" "$ra" "$rb" "$(awk -v a="$ra" -v b="$rb" 'BEGIN {if (a > 0) printf "%.3f", b / a; else print "-"}')"
	done
done
