#!/usr/bin/env python3
"""PyTorch's side of the CPU memory comparison: ResNet-50 training on the
host (forward, cross-entropy, backward, SGD with momentum and weight decay),
the net of tools/gpu/compare_torch.py (Caffe's layout: ceil-rounded pooling,
the stride on the first 1x1), on constant inputs as gocaffe's DummyData.
Run it under /usr/bin/time -v: the maximum resident set is the figure.

usage: torch_train_cpu.py BATCH ITERATIONS
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from compare_torch import ResNet50  # noqa: E402


def main():
    batch, iterations = int(sys.argv[1]), int(sys.argv[2])
    torch.manual_seed(1)
    model = ResNet50().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=0.0005)
    x = torch.full((batch, 3, 224, 224), 0.5)
    y = torch.ones(batch, dtype=torch.long)
    for i in range(iterations):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print(f"iteration {i}, loss = {loss.item():.6g}", flush=True)


if __name__ == "__main__":
    main()
