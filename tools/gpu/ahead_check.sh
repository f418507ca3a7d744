#!/usr/bin/env bash
# The host one replay ahead against lockstep (issue 37), on a machine of
# two GPUs: for each model, ROUNDS interleaved rounds of training
# iterations/s on one GPU, on two GPUs in one process and in two
# torchrun-style processes, each with `-host_ahead` on (the default) and
# off, and the weak-scaling efficiencies against one GPU of the same
# round and setting. Median of the display intervals after the first.
# Run from the repository root after multi_gpu.sh has built bin/gocaffe
# and written /tmp/nets (or with BUILD=1).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
mkdir -p "$out"
if [ -n "${BUILD:-}" ]; then
	go build -tags cuda,nccl -o bin/gocaffe ./cmd/gocaffe || exit 1
	python3 tools/gpu/time_nets.py /tmp/nets >/dev/null
fi
. tools/gpu/rates.sh
for model in ${MODELS:-lenet cifar10_quick}; do
	solver=/tmp/nets/${model}_time_solver.prototxt
	case $model in
	lenet | cifar10_quick) sed -i "s/^max_iter:.*/max_iter: ${ITERS:-6000}/; s/^display:.*/display: 1000/" "$solver" ;;
	*) sed -i "s/^max_iter:.*/max_iter: 150/; s/^display:.*/display: 25/" "$solver" ;;
	esac
	for r in $(seq "${ROUNDS:-3}"); do
		line="$model round $r:"
		for ahead in true false; do
			one=$(bin/gocaffe train -solver "$solver" -gpu 0 -host_ahead=$ahead 2>&1 | tee "$out/ahead.$ahead.log" | median_rate)
			two=$(bin/gocaffe train -solver "$solver" -gpu 0,1 -host_ahead=$ahead 2>&1 | median_rate)
			tr=$(torchrun2 bin/gocaffe train -solver "$solver" -gpu 0,1 -host_ahead=$ahead | median_rate)
			line+=$(python3 -c "import sys; a,b,c=map(float,sys.argv[2:]); print(f' ahead={sys.argv[1]}: 1 GPU {a:.0f}, one process {b:.0f} ({b/a:.3f}), torchrun {c:.0f} ({c/a:.3f});', end='')" "$ahead" "$one" "$two" "$tr")
		done
		echo "$line"
	done
done 2>&1 | tee "$out/ahead.txt"
grep -h -m1 "recorded as a CUDA graph" "$out"/ahead.*.log
