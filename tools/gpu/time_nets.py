#!/usr/bin/env python3
"""Writes data-free copies of the models for timing on the GPU machine.

The models' Data layers read databases the GPU machine does not have. This
replaces the TRAIN-phase Data layer by a DummyData layer with the same tops,
the model's batch size and item shape, and constant contents (filled once,
so timing measures the net, not a random number generator), and drops the
TEST-phase data layer. It also writes a solver per net for timing whole
training iterations (forward, backward and update).

usage: time_nets.py OUTDIR
"""
import os
import re
import sys

# model: (train_val prototxt, batch, item shape)
MODELS = {
    "lenet": ("models/lenet/lenet_train_test.prototxt", 64, (1, 28, 28)),
    "cifar10_quick": ("models/cifar10_quick/cifar10_quick_train_test.prototxt", 100, (3, 32, 32)),
    "caffenet": ("models/caffenet/train_val.prototxt", 256, (3, 227, 227)),
    "googlenet": ("models/googlenet/train_val.prototxt", 64, (3, 224, 224)),
    "resnet50": ("models/resnet50/train_val.prototxt", 64, (3, 224, 224)),
    "mobilenet": ("models/mobilenet/train_val.prototxt", 64, (3, 224, 224)),
}


def layer_blocks(text):
    """Splits a prototxt into (is_layer, text) pieces at top-level layer blocks."""
    pieces, i = [], 0
    for m in re.finditer(r"^layer\s*\{", text, re.M):
        if m.start() < i:
            continue
        depth, j = 0, m.start()
        while True:
            c = text[j]
            depth += c == "{"
            depth -= c == "}"
            j += 1
            if depth == 0 and c == "}":
                break
        pieces.append((False, text[i:m.start()]))
        pieces.append((True, text[m.start():j]))
        i = j
    pieces.append((False, text[i:]))
    return pieces


def dummy(batch, item):
    dims = " ".join(f"dim: {d}" for d in (batch,) + item)
    return ('layer {\n  name: "data"\n  type: "DummyData"\n  top: "data"\n  top: "label"\n'
            f'  dummy_data_param {{\n    shape {{ {dims} }}\n    shape {{ dim: {batch} }}\n'
            '    data_filler { type: "constant" value: 0.5 }\n    data_filler { type: "constant" value: 1 }\n  }\n}')


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, (path, batch, item) in MODELS.items():
        out = []
        for is_layer, piece in layer_blocks(open(path).read()):
            if is_layer and re.search(r'type:\s*"Data"', piece):
                if "phase: TRAIN" in piece:
                    out.append(dummy(batch, item))
                continue
            out.append(piece)
        net = os.path.join(outdir, f"{name}_time.prototxt")
        with open(net, "w") as f:
            f.write("".join(out))
        with open(os.path.join(outdir, f"{name}_time_solver.prototxt"), "w") as f:
            f.write(f'net: "{net}"\nbase_lr: 0.001\nmomentum: 0.9\nweight_decay: 0.0005\n'
                    'lr_policy: "fixed"\ndisplay: 50\nmax_iter: 200\nsnapshot_after_train: false\n'
                    'random_seed: 1\nsolver_mode: GPU\n')
        print(net)


if __name__ == "__main__":
    main(sys.argv[1])
