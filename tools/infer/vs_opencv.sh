#!/bin/sh
# Times gocaffe's forward pass against OpenCV's dnn on the deploy nets, the
# two interleaved round by round, each round under the machine's shared
# lock (flock $LOCK), and compares their outputs.
#
#   tools/infer/vs_opencv.sh OUTDIR ROUNDS ITERATIONS BATCHES MODEL...
#   tools/infer/vs_opencv.sh /tmp/vs 3 10 "1 10" models/mobilenet/deploy.prototxt
#
# Prints, per model and batch, each side's median over all its timed
# passes and the ratio gocaffe / OpenCV, then the outputs' difference.
# INFER_FLAGS passes flags to gocaffe's side (-nofold: the unfolded net;
# -nowinograd: folded, 3x3 convolutions on im2col and GEMM alone).
set -eu
out=$1 rounds=$2 iters=$3 batches=$4
shift 4
lock=${LOCK:-/tmp/gocaffe-heavy.lock}
here=$(dirname "$0")
mkdir -p "$out"
go build -o "$out/infer" "./$here"
for model in "$@"; do
	name=$(basename "$(dirname "$model")")_$(basename "$model" .prototxt)
	for b in $batches; do
		d=$out/$name/b$b
		"$out/infer" weights -model "$model" -batch "$b" -o "$d"
		: > "$d/go.txt"; : > "$d/cv.txt"
		r=0
		while [ $r -lt "$rounds" ]; do
			flock "$lock" "$out/infer" time ${INFER_FLAGS:-} -model "$model" -weights "$d/weights.caffemodel" -input "$d/input.npy" -iterations "$iters" -out "$d/go.npy" >> "$d/go.txt"
			flock "$lock" /usr/bin/python3 "$here/opencv_bench.py" "$model" "$d/weights.caffemodel" "$d/input.npy" "$iters" "$d/cv.npy" >> "$d/cv.txt"
			r=$((r + 1))
		done
		/usr/bin/python3 - "$d" "$name" "$b" <<'PY'
import statistics, sys
d, name, b = sys.argv[1:4]
def times(f):
    return [float(t) for line in open(f) for t in line.split("times ")[1].split(",")]
g, c = times(d + "/go.txt"), times(d + "/cv.txt")
mg, mc = statistics.median(g), statistics.median(c)
print("%-40s batch %-3s gocaffe %8.2f ms  opencv %8.2f ms  ratio %.2f  (%d passes each)" % (name, b, mg, mc, mg / mc, len(g)))
PY
		printf 'output: '; /usr/bin/python3 "$here/compare.py" "$d/go.npy" "$d/cv.npy"
		if [ -s "$d/logits.txt" ]; then
			read -r layer blob < "$d/logits.txt"
			"$out/infer" time ${INFER_FLAGS:-} -model "$model" -weights "$d/weights.caffemodel" -input "$d/input.npy" -iterations 1 -warmup 0 -blob "$blob" -out "$d/go_logits.npy" > /dev/null
			/usr/bin/python3 "$here/opencv_bench.py" "$model" "$d/weights.caffemodel" "$d/input.npy" 1 "$d/cv_logits.npy" "$layer" > /dev/null
			printf '%s (before Softmax): ' "$blob"; /usr/bin/python3 "$here/compare.py" "$d/go_logits.npy" "$d/cv_logits.npy"
		fi
	done
done
