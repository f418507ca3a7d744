#!/usr/bin/env bash
# The data issue's checks on the GPU machine, in one run (see
# ../shared/device/README.md for carrying Go there): LeNet trained on
# Fashion-MNIST in GPU mode through the README's example script, the LeNet
# iteration fed by Data against Input, and the whole `cuda` test suite.
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

echo "== LeNet iteration: Input against Data (LMDB), GPU, interleaved runs"
go test -tags cuda -c -o /tmp/models.test ./models/
for i in 1 2 3 4 5 6; do
	for feed in Input Data; do
		(cd models && timeout 60 /tmp/models.test -test.run XXX -test.bench "LeNetIterationGPU$feed\$" -test.benchtime 5000x) | grep Benchmark
	done
done | sort | tee "$out/bench_lenet.txt"

echo "== go test -tags cuda ./..."
timeout 400 go test -tags cuda ./... >"$out/test.log" 2>&1
echo "exit $?"
grep -E "^(ok|FAIL|---|panic)" "$out/test.log"
