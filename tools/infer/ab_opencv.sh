#!/bin/sh
# Times two builds of tools/infer (a base and a new one) and OpenCV's dnn
# on the same deploy nets, weights and inputs: one run of each per round,
# the order reversed every other round, each run under the machine's
# shared lock (flock $LOCK), so that drifts of a shared machine's load
# fall on all three alike. Prints per model and batch the medians and
# least times of all passes and the ratios to OpenCV's.
#
#   tools/infer/ab_opencv.sh OUTDIR ROUNDS ITERATIONS BATCHES BASE NEW MODEL...
#   go build -o /tmp/base ./tools/infer   # at the base commit
#   go build -o /tmp/new ./tools/infer
#   tools/infer/ab_opencv.sh /tmp/ab 5 10 "1 10" /tmp/base /tmp/new models/mobilenet/deploy.prototxt
#
# Weights and inputs (NEW's `infer weights`) are made once per model and
# batch under OUTDIR and kept: a second call reuses them.
set -eu
out=$1 rounds=$2 iters=$3 batches=$4 base=$5 new=$6
shift 6
lock=${LOCK:-/tmp/gocaffe-heavy.lock}
here=$(dirname "$0")
for model in "$@"; do
	name=$(basename "$(dirname "$model")")_$(basename "$model" .prototxt)
	for b in $batches; do
		d=$out/$name/b$b
		[ -s "$d/input.npy" ] || "$new" weights -model "$model" -batch "$b" -o "$d"
		: > "$d/base.txt"; : > "$d/new.txt"; : > "$d/cv.txt"
		r=0
		while [ $r -lt "$rounds" ]; do
			order="base new cv"
			[ $((r % 2)) -eq 1 ] && order="cv new base"
			for side in $order; do
				case $side in
				base) flock "$lock" "$base" time -model "$model" -weights "$d/weights.caffemodel" -input "$d/input.npy" -iterations "$iters" >> "$d/base.txt" ;;
				new) flock "$lock" "$new" time -model "$model" -weights "$d/weights.caffemodel" -input "$d/input.npy" -iterations "$iters" >> "$d/new.txt" ;;
				cv) flock "$lock" /usr/bin/python3 "$here/opencv_bench.py" "$model" "$d/weights.caffemodel" "$d/input.npy" "$iters" >> "$d/cv.txt" ;;
				esac
			done
			r=$((r + 1))
		done
		/usr/bin/python3 - "$d" "$name" "$b" <<'PY'
import statistics, sys
d, name, b = sys.argv[1:4]
def times(side):
    return [float(t) for line in open(f"{d}/{side}.txt") for t in line.split("times ")[1].split(",")]
base, new, cv = times("base"), times("new"), times("cv")
mb, mn, mc = statistics.median(base), statistics.median(new), statistics.median(cv)
print(f"{name:36s} batch {b:3s} median: base {mb:8.2f} new {mn:8.2f} opencv {mc:8.2f} ratio base {mb/mc:.2f} new {mn/mc:.2f}"
      f" | least: base {min(base):8.2f} new {min(new):8.2f} opencv {min(cv):8.2f} ratio base {min(base)/min(cv):.2f} new {min(new)/min(cv):.2f} ({len(new)} passes each)")
PY
	done
done
