#!/usr/bin/env bash
# Diagnoses a hang of a two-GPU job: LeNet on an LMDB (GPU Data layer) with
# and without CUDA graphs, and two torchrun-style processes on DummyData,
# each stopped with SIGQUIT after 30 s (Go prints every goroutine's stack).
set -u
d=/tmp/j
mkdir -p $d
go build -tags cuda,nccl -o bin/gocaffe ./cmd/gocaffe || exit 1
bin/gocaffe convert_mnist_data .device/fm/t10k-images-idx3-ubyte.gz .device/fm/t10k-labels-idx1-ubyte.gz $d/db >/dev/null 2>&1
sed "s#source: \"examples/lenet/fashion_mnist_train_lmdb\"#source: \"$d/db\"#; s/batch_size: 64/batch_size: 32/" models/lenet/lenet_train_test.prototxt >$d/net.prototxt
printf 'net: "%s"\nbase_lr: 0.01 momentum: 0.9 lr_policy: "fixed" display: 5 max_iter: 10 snapshot_after_train: false random_seed: 7\n' $d/net.prototxt >$d/solver.prototxt
show() {
	echo "-- $1"
	grep -E "Iteration|Training without|recorded|rror|exit|Optimization Done" "$1" | tail -6
	awk '/^goroutine /{g=$0; p=0} /gocaffe\/(solver|parallel|cuda|net|layer|cmd)/{if(!p){print g}; p=1; print "   " $0}' "$1" | grep -v "^\s*/" | head -40
}
timeout -s QUIT 30 bin/gocaffe train -solver $d/solver.prototxt -gpu 0,1 >$OUT/a.log 2>&1
echo "A (Data, graphs) exit $?"
show $OUT/a.log
timeout -s QUIT 30 bin/gocaffe train -solver $d/solver.prototxt -gpu 0,1 -cuda_graphs=false >$OUT/b.log 2>&1
echo "B (Data, no graphs) exit $?"
show $OUT/b.log
python3 tools/gpu/time_nets.py /tmp/nets >/dev/null
s=/tmp/nets/lenet_time_solver.prototxt
sed -i 's/^max_iter:.*/max_iter: 300/; s/^display:.*/display: 100/' $s
RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29555 timeout -s QUIT 30 bin/gocaffe train -solver $s -gpu 0,1 >$OUT/c1.log 2>&1 &
RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29555 timeout -s QUIT 30 bin/gocaffe train -solver $s -gpu 0,1 >$OUT/c0.log 2>&1
echo "C0 (torchrun DummyData rank 0) exit $?"
wait
show $OUT/c0.log
show $OUT/c1.log
