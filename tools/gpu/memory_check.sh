#!/usr/bin/env bash
# The GPU memory checks of the liveness pass (issue 35), in one run on the
# GPU machine (see ../shared/device/README.md for carrying Go there):
#
#   1. same numbers: each model (DummyData, tools/gpu/time_nets.py) trained
#      a few iterations with -deterministic, with and without
#      -no_memory_reuse, and once more without; the snapshots' weights must
#      be equal byte for byte;
#   2. speed: the iteration rate with and without reuse, interleaved;
#   3. the largest ResNet-50 training batch that fits (gocaffe: its plan's
#      estimate, then a run at that batch);
#
#   4. tools/gpu/compare_torch.py beside PyTorch.
#
# SECTIONS picks some ("same rate big compare", all by default). Logs go to
# $OUT (a few files: the device tool brings back eight).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
mkdir -p "$out"
bin=bin/gocaffe
go build -tags cuda -o $bin ./cmd/gocaffe || exit 1
nets=/tmp/nets
python3 tools/gpu/time_nets.py $nets >/dev/null
models=${MODELS:-lenet cifar10_quick caffenet googlenet resnet50 mobilenet}

want() { [[ " ${SECTIONS:-same rate big compare} " == *" $1 "* ]]; }

want same && {
echo "== same weights with and without memory reuse (-deterministic, ${ITERS:=8} iterations)"
snap=/tmp/snap
mkdir -p $snap
for m in $models; do
	for v in own own2 reuse; do
		s=$nets/${m}_${v}_solver.prototxt
		sed "s/^max_iter:.*/max_iter: $ITERS/; s/^display:.*/display: 1/; s/^snapshot_after_train:.*/snapshot_after_train: true/" \
			$nets/${m}_time_solver.prototxt >$s
		echo "snapshot_prefix: \"$snap/${m}_$v\"" >>$s
		flags="-deterministic"
		[ $v != reuse ] && flags="$flags -no_memory_reuse"
		$bin train -solver $s -gpu 0 $flags >$snap/${m}_$v.log 2>&1 || { echo "$m $v: FAILED"; tail -5 $snap/${m}_$v.log; }
	done
	a=$snap/${m}_own_iter_$ITERS.caffemodel
	b=$snap/${m}_own2_iter_$ITERS.caffemodel
	c=$snap/${m}_reuse_iter_$ITERS.caffemodel
	r1=$(cmp -s $a $b && echo equal || echo DIFFER)
	r2=$(cmp -s $a $c && echo equal || echo DIFFER)
	l1=$(grep -o "loss = [0-9.e+-]*" $snap/${m}_own.log | tail -1)
	l2=$(grep -o "loss = [0-9.e+-]*" $snap/${m}_reuse.log | tail -1)
	plan=$(grep -h -m1 -o "liveness.*" $snap/${m}_reuse.log | head -c 160)
	echo "$m: two runs without reuse: $r1; with and without reuse: $r2 (last $l1 / $l2); $plan"
done | tee $out/same.txt
grep -h "Peak device memory" $snap/*_reuse.log | head -3
}

want rate && {
echo "== iteration rate and memory, with and without reuse (default algorithms, 200 iterations, interleaved)"
. tools/gpu/rates.sh
held() { sed -n 's/.*; \([0-9.]*\) MiB held while training.*/\1/p'; }
for m in $models; do
	s=$nets/${m}_time_solver.prototxt
	for round in $(seq ${ROUNDS:-1}); do
		$bin train -solver $s -gpu 0 -no_memory_reuse >$out/rate_${m}_own.log 2>&1
		$bin train -solver $s -gpu 0 >$out/rate_${m}_reuse.log 2>&1
		a=$(median_rate 100 <$out/rate_${m}_own.log)
		b=$(median_rate 100 <$out/rate_${m}_reuse.log)
		echo "$m round $round: without reuse $a iter/s, $(held <$out/rate_${m}_own.log) MiB; with reuse $b iter/s, $(held <$out/rate_${m}_reuse.log) MiB"
	done
done | tee $out/rate.txt
rm -f $out/rate_*.log
}

want big && {
echo "== largest ResNet-50 training batch on this GPU"
# The peak at batches 64 and 128 gives what a batch adds; the estimate for
# the GPU's memory, then 95% and 90% of it, are tried for 3 iterations.
sed "s|resnet50_time.prototxt|resnet50_big.prototxt|; s/^max_iter:.*/max_iter: 3/; s/^display:.*/display: 1/" $nets/resnet50_time_solver.prototxt >$nets/resnet50_big_solver.prototxt
peak_at() {
	sed "s/dim: 64/dim: $1/g" $nets/resnet50_time.prototxt >$nets/resnet50_big.prototxt
	$bin train -solver $nets/resnet50_big_solver.prototxt -gpu 0 2>&1 | sed -n 's/.*Peak device memory on GPU [0-9]*: \([0-9.]*\) MiB.*/\1/p' | tail -1
}
p64=$(peak_at 64) p128=$(peak_at 128)
total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
echo "gocaffe: peak $p64 MiB at batch 64, $p128 MiB at batch 128; the GPU holds $total MiB"
fit=$(python3 -c "a,b,t=$p64,$p128,$total; per=(b-a)/64; print(int((t*0.97-(a-64*per))/per))")
for b in $fit $((fit * 95 / 100)) $((fit * 90 / 100)) $((fit * 80 / 100)); do
	sed "s/dim: 64/dim: $b/g" $nets/resnet50_time.prototxt >$nets/resnet50_big.prototxt
	if $bin train -solver $nets/resnet50_big_solver.prototxt -gpu 0 >$out/big.log 2>&1; then
		echo "gocaffe: ResNet-50 trains at batch $b: $(grep -h 'Peak device memory' $out/big.log)"
		break
	fi
	echo "gocaffe: batch $b failed: $(grep -h -m1 -E 'out of memory|OUT_OF_MEMORY|error|Error' $out/big.log | head -c 300)"
done
python3 tools/gpu/max_batch.py 2>&1 | tail -3
}

want compare && {
	echo "== beside PyTorch (compare_torch.py)"
	COMPARE_MATH=${COMPARE_MATH:-fp32} python3 tools/gpu/compare_torch.py $bin $nets "$(echo $models | tr ' ' ,)" 2>&1 | tee $out/compare.txt
}
