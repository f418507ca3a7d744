#!/usr/bin/env bash
# Where a small net's two-GPU iteration loses time (issue 37), on a
# machine of two GPUs after tools/gpu/multi_gpu.sh built bin/gocaffe and
# wrote /tmp/nets: for each model, iterations/s of one GPU; of two
# independent one-GPU jobs at once (the host's share, no communication);
# and of the two-GPU job with other bucket sizes (-bucket_mib) and NCCL
# protocols. Interleaved, median of the display intervals after the first.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
. tools/gpu/rates.sh
for model in ${MODELS:-lenet cifar10_quick}; do
	solver=/tmp/nets/${model}_time_solver.prototxt
	sed -i "s/^max_iter:.*/max_iter: 6000/; s/^display:.*/display: 1000/" "$solver"
	one=$(bin/gocaffe train -solver "$solver" -gpu 0 2>&1 | median_rate)
	bin/gocaffe train -solver "$solver" -gpu 1 >/tmp/alone1.log 2>&1 &
	alone=$(bin/gocaffe train -solver "$solver" -gpu 0 2>&1 | median_rate)
	wait
	alone1=$(median_rate </tmp/alone1.log)
	echo "$model: 1 GPU $one iter/s; two independent 1-GPU jobs at once: $alone and $alone1"
	for v in "default|" "bucket 0.0625 MiB|-bucket_mib 0.0625" "bucket 0.25 MiB|-bucket_mib 0.25" "one bucket|-bucket_mib 64" \
		"NCCL_PROTO=LL|NCCL_PROTO=LL" "NCCL_PROTO=Simple|NCCL_PROTO=Simple" "no graphs|-cuda_graphs=false"; do
		name=${v%%|*}
		args=${v#*|}
		envs=()
		flags=()
		for a in $args; do
			case $a in NCCL_*) envs+=("$a") ;; *) flags+=("$a") ;; esac
		done
		two=$(env "${envs[@]}" bin/gocaffe train -solver "$solver" -gpu 0,1 "${flags[@]}" 2>&1 | tee "$out/var.log" | median_rate)
		python3 -c "import sys; print(f'{sys.argv[1]}: 2 GPUs, {sys.argv[2]}: {float(sys.argv[3]):.1f} iter/s, efficiency {float(sys.argv[3])/float(sys.argv[4]):.3f}')" "$model" "$name" "$two" "$one"
	done
done 2>&1 | tee "$out/variants.txt"
rm -f "$out/var.log"
