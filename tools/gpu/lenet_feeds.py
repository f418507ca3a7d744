#!/usr/bin/env python3
"""Writes LeNet solvers that differ only in how the net is fed, for timing
the training loop (`gocaffe train -gpu 0`) with each:

  data   the model's own Data layers, reading the Fashion-MNIST LMDBs that
         examples/lenet/train_fashion_mnist.sh makes
  input  the TRAIN Data layer replaced by an Input layer with the same tops
  dummy  the TRAIN Data layer replaced by constant DummyData

No test net (no test_iter), so every display interval is training alone.

usage: lenet_feeds.py OUTDIR ITERATIONS
"""
import os
import re
import sys

from time_nets import dummy, layer_blocks

MODEL = "models/lenet/lenet_train_test.prototxt"
BATCH, ITEM = 64, (1, 28, 28)


def input_layer():
    dims = " ".join(f"dim: {d}" for d in (BATCH,) + ITEM)
    return ('layer {\n  name: "data"\n  type: "Input"\n  top: "data"\n  top: "label"\n'
            f'  input_param {{ shape {{ {dims} }} shape {{ dim: {BATCH} }} }}\n}}')


def main(outdir, iterations):
    os.makedirs(outdir, exist_ok=True)
    feeds = {"input": input_layer(), "dummy": dummy(BATCH, ITEM)}
    for feed in ("data", "input", "dummy"):
        net = os.path.abspath(MODEL)
        if feed != "data":
            out = []
            for is_layer, piece in layer_blocks(open(MODEL).read()):
                if is_layer and re.search(r'type:\s*"Data"', piece):
                    if "phase: TRAIN" in piece:
                        out.append(feeds[feed])
                    continue
                out.append(piece)
            net = os.path.join(outdir, f"lenet_{feed}.prototxt")
            with open(net, "w") as f:
                f.write("".join(out))
        with open(os.path.join(outdir, f"lenet_{feed}_solver.prototxt"), "w") as f:
            f.write(f'net: "{net}"\nbase_lr: 0.01\nmomentum: 0.9\nweight_decay: 0.0005\n'
                    f'lr_policy: "inv"\ngamma: 0.0001\npower: 0.75\ndisplay: 500\nmax_iter: {iterations}\n'
                    'snapshot_after_train: false\nrandom_seed: 1\nsolver_mode: GPU\n')


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
