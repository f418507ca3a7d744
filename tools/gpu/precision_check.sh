#!/usr/bin/env bash
# The mixed-precision checks (issue 34), in one run on the GPU machine (see
# ../shared/device/README.md for carrying Go there):
#
#   tests    every 16-bit layer path against FP32 (layer/all), the storage
#            conversions (syncedmem, blob), the engines' own parity tests,
#            and LeNet trained on Fashion-MNIST in fp32, fp16 and bf16
#            (cmd/gocaffe; .device/fm holds the test set);
#   nvcaffe  NVCaffe's own fp16 AlexNet files (NVCAFFE_NET, NVCAFFE_SOLVER:
#            models/bvlc_alexnet/train_val_fp16.prototxt and
#            solver_fp16.prototxt of NVIDIA/caffe) on DummyData, as the
#            net asks (FLOAT16) and with -precision fp32;
#   compare  tools/gpu/compare_torch.py in COMPARE_MATH (default
#            tf32,bf16) beside PyTorch.
#
# SECTIONS picks some ("tests nvcaffe compare" by default). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
mkdir -p "$out"
bin=bin/gocaffe
go build -tags cuda -o $bin ./cmd/gocaffe || exit 1
want() { [[ " ${SECTIONS:-tests nvcaffe compare} " == *" $1 "* ]]; }

want tests && {
echo "== tests"
GOCAFFE_FASHION_MNIST=$PWD/.device/fm go test -tags cuda -count 1 -v ./syncedmem/ ./blob/ ./layer/all/ ./cmd/gocaffe/ \
	-run 'Storage|Reduced|Narrow|Widen|CuDNNEnginesMatchCPU|BF16|FP16|Float16' >"$out/tests.log" 2>&1
echo "exit $?"
grep -E -- '^(--- FAIL|ok|FAIL|panic)|accuracy \[|    --- FAIL' "$out/tests.log" | head -40
go test -tags cuda -count 1 ./layer/vision/ ./layer/neuron/ ./layer/utility/ ./net/ 2>&1 | tail -8
}

want nvcaffe && {
echo "== NVCaffe's fp16 AlexNet on DummyData"
python3 tools/gpu/nvcaffe_dummy.py "${NVCAFFE_NET:?}" "${NVCAFFE_SOLVER:?}" /tmp/nvcaffe 128 60
for p in "" fp32 fp16 bf16; do
	$bin train -solver /tmp/nvcaffe/solver.prototxt -gpu 0 ${p:+-precision $p} >"$out/nvcaffe${p:+_$p}.log" 2>&1
	echo "-precision ${p:-(as the net asks)}: exit $?; $(grep -c 'computes in FLOAT16' "$out/nvcaffe${p:+_$p}.log") layers log FLOAT16"
	grep -E "Iteration [0-9]+ \(|loss = |Peak device memory|W[0-9]{4}" "$out/nvcaffe${p:+_$p}.log" | tail -4
done
grep -E "computes in" "$out/nvcaffe.log" | head -30
}

want compare && {
echo "== beside PyTorch"
python3 tools/gpu/time_nets.py /tmp/nets >/dev/null
for m in ${MODELS:-lenet cifar10_quick caffenet googlenet resnet50 mobilenet}; do
	COMPARE_MATH=${COMPARE_MATH:-tf32,bf16} python3 tools/gpu/compare_torch.py $bin /tmp/nets $m 2>&1 | grep -v "^model" | tail -3
done | tee "$out/compare.txt"
}
