#!/usr/bin/env bash
# The data-parallel checks (issue 17) on a machine of two or more GPUs, in
# one run (see ../shared/device/README.md for carrying Go there): the NCCL
# tests, `gocaffe train -gpu 0,1` and two torchrun-style processes against
# one GPU at twice the batch, a rank killed mid-run, and the weak scaling
# of training throughput (each GPU at the model's batch, DummyData).
#
# Fashion-MNIST's test set comes in .device/fm (t10k-*-idx?-ubyte.gz).
# Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi -L
ngpu=$(nvidia-smi -L | wc -l)

if [ "${TESTS:-}" != none ]; then
	echo "== tests (cuda, nccl)"
	GOCAFFE_FASHION_MNIST=$PWD/.device/fm go test -p 1 -tags cuda,nccl -count 1 -v -run "${TESTS:-TwoGPUs|Torchrun|NCCL|OneRank|CommOnAnother|Bucket}" \
		./cmd/gocaffe/ ./parallel/ ./solver/ >"$out/tests.log" 2>&1
	echo "exit $?"
	grep -E -- '^(--- |ok|FAIL)|weights differ by at most|aborting|stopped without|parameters differ' "$out/tests.log"
fi

echo "== weak scaling: training iterations/s, each GPU at the model's batch (DummyData)"
go build -tags cuda,nccl -o bin/gocaffe ./cmd/gocaffe || exit 1
python3 tools/gpu/time_nets.py /tmp/nets >/dev/null
# The median of the display intervals after the first (warm-up, the
# graph's recording) of rank 0's log on stdin.
. tools/gpu/rates.sh
# Each configuration is a new process, whose set-up times cuDNN's
# algorithms afresh: a small net's rate moves with those picks from run to
# run, so small nets run ROUNDS (default 3) interleaved rounds and the
# efficiency is that of the medians; ResNet-50 and CaffeNet run
# ROUNDS_LARGE (default 1).
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for model in ${MODELS:-resnet50 caffenet cifar10_quick lenet}; do
	solver=/tmp/nets/${model}_time_solver.prototxt
	rounds=${ROUNDS:-3}
	case $model in # a few seconds of training a run
	lenet | cifar10_quick) sed -i "s/^max_iter:.*/max_iter: 6000/; s/^display:.*/display: 1000/" "$solver" ;;
	*) sed -i "s/^max_iter:.*/max_iter: 150/; s/^display:.*/display: 25/" "$solver"; rounds=${ROUNDS_LARGE:-1} ;;
	esac
	ones=() twos=() trs=()
	for r in $(seq "$rounds"); do
		ones+=("$(bin/gocaffe train -solver "$solver" -gpu 0 2>&1 | tee "$out/$model.1gpu.log" | median_rate)")
		twos+=("$(bin/gocaffe train -solver "$solver" -gpu 0,1 2>&1 | tee "$out/$model.2gpu.log" | median_rate)")
		trs+=("$(torchrun2 bin/gocaffe train -solver "$solver" -gpu 0,1 | tee "$out/$model.torchrun.log" | median_rate)")
		echo "$model round $r: 1 GPU ${ones[-1]}, one process ${twos[-1]}, torchrun ${trs[-1]} iter/s"
	done
	grep -h -m1 "Gradients all-reduced in" "$out/$model.2gpu.log"
	grep -h -m1 -E "recorded as a CUDA graph|without CUDA graphs" "$out/$model.2gpu.log"
	python3 -c "import sys; m,n,a,b,c=sys.argv[1],sys.argv[2],*map(float,sys.argv[3:]); print(f'{m} (median of {n}): 1 GPU {a:.2f} iter/s; 2 GPUs (one process) {b:.2f} iter/s, efficiency {b/a:.3f}; 2 torchrun-style processes {c:.2f} iter/s, efficiency {c/a:.3f}')" \
		"$model" "$rounds" "$(median "${ones[@]}")" "$(median "${twos[@]}")" "$(median "${trs[@]}")"
done | tee "$out/scaling.txt"

echo "== bucket timeline (event timings of a pass run as written, rank 0)"
GOCAFFE_TIMELINE_SOLVER=/tmp/nets/resnet50_time_solver.prototxt go test -tags cuda,nccl -count 1 -v -run TestTwoGPUsBucketTimeline ./solver/ 2>&1 | tee "$out/timeline.log" | grep -E "bucket|^(--- |ok|FAIL)"
