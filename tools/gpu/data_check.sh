#!/usr/bin/env bash
# The data issue's checks on the GPU machine, in one run (see
# ../shared/device/README.md for carrying Go there): LeNet trained on
# Fashion-MNIST in GPU mode through the README's example script, the
# training loop and the LeNet iteration fed by Data against Input, and the
# whole `cuda` test suite (SKIP_TESTS=1 leaves it out).
#
# Fashion-MNIST comes in .device/fm (the images xz-compressed, to stay
# under the device tool's carry limit). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/fm

for f in .device/fm/*.xz; do xz -dc "$f" >"/tmp/fm/$(basename "$f" .xz)"; done
cp .device/fm/*labels* /tmp/fm/

echo "== LeNet on Fashion-MNIST, GPU"
SECONDS=0
FASHION_MNIST_DIR=/tmp/fm GOCAFFE_TAGS=cuda timeout 300 examples/lenet/train_fashion_mnist.sh -gpu 0 >"$out/lenet_gpu.log" 2>&1
echo "exit $? after ${SECONDS} s (build, conversion and training)"
grep -E "Test net output #0|Optimization Done|100 iters" "$out/lenet_gpu.log" | awk 'NR%10==1 || /Done/ || /accuracy/' | tail -30

echo "== training loop: LeNet fed by Data, Input and constant DummyData (gocaffe train -gpu 0, no test net), interleaved"
python3 tools/gpu/lenet_feeds.py /tmp/feeds 5000
for round in 1 2 3; do
	for feed in data input dummy; do
		rates=$(bin/gocaffe train -solver "/tmp/feeds/lenet_${feed}_solver.prototxt" -gpu 0 2>&1 |
			sed -n 's/.*Iteration [1-9][0-9]* (\([0-9.]*\) iter\/s.*/\1/p' | tr '\n' ' ')
		echo "$feed round $round: iter/s per 500 iterations: $rates"
	done
done | tee "$out/feeds.txt"

echo "== LeNet iteration: Input against Data (LMDB), GPU, interleaved runs"
go test -tags cuda -c -o /tmp/models.test ./models/
for i in 1 2 3 4 5 6; do
	for feed in Input Data; do
		(cd models && timeout 60 /tmp/models.test -test.run XXX -test.bench "LeNetIterationGPU$feed\$" -test.benchtime 5000x) | grep Benchmark
	done
done | sort | tee "$out/bench_lenet.txt"

[[ -n ${SKIP_TESTS:-} ]] && exit 0
echo "== go test -tags cuda ./..."
timeout 400 go test -tags cuda ./... >"$out/test.log" 2>&1
echo "exit $?"
grep -E "^(ok|FAIL|---|panic)" "$out/test.log"
