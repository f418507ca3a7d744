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

echo "== tests (cuda, nccl)"
GOCAFFE_FASHION_MNIST=$PWD/.device/fm go test -tags cuda,nccl -count 1 -v -run 'TwoGPUs|Torchrun|NCCL|OneRank|CommOnAnother' \
	./cmd/gocaffe/ ./parallel/ ./solver/ >"$out/tests.log" 2>&1
echo "exit $?"
grep -E -- '^(--- |ok|FAIL)|weights differ by at most|aborting|stopped without' "$out/tests.log"

echo "== weak scaling: training iterations/s, each GPU at the model's batch (DummyData)"
go build -tags cuda,nccl -o bin/gocaffe ./cmd/gocaffe || exit 1
python3 tools/gpu/time_nets.py /tmp/nets >/dev/null
for model in caffenet cifar10_quick lenet; do
	base=""
	for n in $(seq 1 "$ngpu"); do
		[ "$n" = 1 ] || [ "$n" = 2 ] || [ "$n" = 4 ] || [ "$n" = 8 ] || continue
		gpus=$(seq -s, 0 $((n - 1)))
		# The median of the display intervals after the first (warm-up).
		rate=$(bin/gocaffe train -solver "/tmp/nets/${model}_time_solver.prototxt" -gpu "$gpus" 2>&1 |
			sed -n 's/.*Iteration [1-9][0-9]* (\([0-9.]*\) iter\/s.*/\1/p' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
		[ -n "$base" ] || base=$rate
		python3 -c "import sys; n,r,b=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); print(f'$model: {n} GPU(s): {r:.2f} iter/s, {r*n:.2f} rank-iterations/s, weak-scaling efficiency {r/b:.3f}')" "$n" "$rate" "$base"
	done
done | tee "$out/scaling.txt"
