#!/usr/bin/env python3
"""PyTorch's CPU time for one training pass of each model, measured the way
`gocaffe time` measures it (compare.sh runs both, interleaved).

One pass is what `gocaffe time`'s last line times: forward, the loss
(cross-entropy; GoogLeNet's two auxiliary losses at weight 0.3, as its
prototxt), backward into every parameter, no solver update. Parameter
gradients are dropped between passes (zero_grad(set_to_none=True)), so
backward writes them rather than adding to stale ones; the input needs no
gradient (Caffe does not back-propagate into data). float32, NCHW, train
mode (Dropout and batch statistics live), the same constant input and
labels as the DummyData nets. The nets are tools/gpu/compare_torch.py's.

Prints one line per model: name, batch, the median and the least ms of
ITERS passes, each timed on its own, after WARMUP passes (compare.sh takes the median of
gocaffe time's per-pass lines the same way: on a machine shared with other
work a median resists the passes that another process slowed).

usage: torch_train.py THREADS ITERS WARMUP MODEL...
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "gpu"))
sys.path.insert(0, here)
from compare_torch import TORCH  # noqa: E402
from nets import BATCH, ITEM  # noqa: E402


def passes(name, iters, warmup):
    torch.manual_seed(1)
    model = TORCH[name]().train()
    x = torch.full((BATCH[name],) + ITEM[name], 0.5)
    y = torch.ones(BATCH[name], dtype=torch.long)

    def step():
        model.zero_grad(set_to_none=True)
        out = model(x)
        if isinstance(out, tuple):
            loss = F.cross_entropy(out[0], y) + 0.3 * F.cross_entropy(out[1], y) + 0.3 * F.cross_entropy(out[2], y)
        else:
            loss = F.cross_entropy(out, y)
        loss.backward()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def main():
    threads, iters, warmup = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    for name in sys.argv[4:]:
        med, least = passes(name, iters, warmup)
        print(name, BATCH[name], f"{med:.2f}", f"{least:.2f}", flush=True)


if __name__ == "__main__":
    main()
