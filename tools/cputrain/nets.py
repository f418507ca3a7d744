#!/usr/bin/env python3
"""Writes the six models as data-free training nets at the CPU comparison's
batches (compare.sh), for `gocaffe time`.

The Data layers are replaced as tools/gpu/time_nets.py replaces them (one
constant DummyData layer with the same tops, TEST-phase data dropped); only
the batch differs, because the GPU's batches would take minutes an
iteration on a 2-vCPU machine. torch_train.py reads BATCH from here so both
sides always time the same batch.

usage: nets.py OUTDIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import time_nets  # noqa: E402  (the GPU tool's model table and prototxt rewriting)

# Small enough that one training iteration of the largest stays within a few
# seconds on 2 threads, large enough that per-layer fixed costs do not
# dominate (LeNet and CIFAR-10 quick keep their models' own batch).
BATCH = {"lenet": 64, "cifar10_quick": 100, "caffenet": 32, "googlenet": 8, "resnet50": 8, "mobilenet": 8}
ITEM = {name: item for name, (_, _, item) in time_nets.MODELS.items()}


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, (path, _, item) in time_nets.MODELS.items():
        out = []
        for is_layer, piece in time_nets.layer_blocks(open(path).read()):
            if is_layer and re.search(r'type:\s*"Data"', piece):
                if "phase: TRAIN" in piece:
                    out.append(time_nets.dummy(BATCH[name], item))
                continue
            out.append(piece)
        net = os.path.join(outdir, f"{name}_b{BATCH[name]}.prototxt")
        with open(net, "w") as f:
            f.write("".join(out))
        print(net)


if __name__ == "__main__":
    main(sys.argv[1])
