#!/usr/bin/env python3
"""Rewrites a user's train_val prototxt and solver (NVCaffe's fp16 files,
say) to train on synthetic data: its TRAIN-phase Data layer becomes the
DummyData layer of time_nets.py (BATCH items of 3x227x227 and their
labels), its TEST-phase one is dropped, and the solver runs ITERS
iterations without tests or snapshots. The precision checks of issue 34
run NVCaffe's own files so, without ImageNet.

usage: nvcaffe_dummy.py NET SOLVER OUTDIR [BATCH] [ITERS]
"""
import os
import re
import sys

from time_nets import dummy, layer_blocks


def main(net, solver, out, batch=64, iters=100):
    os.makedirs(out, exist_ok=True)
    pieces = []
    for is_layer, piece in layer_blocks(open(net).read()):
        if is_layer and re.search(r'type:\s*"Data"', piece):
            if re.search(r"phase:\s*TEST", piece):
                continue
            piece = dummy(batch, (3, 227, 227))
        pieces.append(piece)
    netpath = os.path.join(out, "net.prototxt")
    with open(netpath, "w") as f:
        f.write("".join(pieces))
    drop = r"(?m)^\s*(net|test_iter|test_interval|test_initialization|max_iter|display|snapshot|snapshot_prefix|snapshot_after_train)\s*:.*$"
    s = re.sub(drop, "", open(solver).read())
    s += (f'\nnet: "{netpath}"\nmax_iter: {iters}\ndisplay: {max(iters // 5, 1)}\nsnapshot: 0\n'
          f'snapshot_after_train: false\nsnapshot_prefix: "{os.path.join(out, "snap")}"\n')
    with open(os.path.join(out, "solver.prototxt"), "w") as f:
        f.write(s)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    main(*args[:3], *map(int, args[3:5]))
