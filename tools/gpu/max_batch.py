#!/usr/bin/env python3
"""The largest batch at which PyTorch trains a model of compare_torch.py on
this GPU in FP32 (eager, channels first, cudnn.benchmark as there): a
bisection over batches, each tried for two SGD iterations, an
out-of-memory error meaning too large.

usage: max_batch.py [model [low high]]   (default resnet50 64 2048)
"""
import sys

import torch
import torch.nn.functional as F

from compare_torch import TORCH, ITEM


def fits(name, batch):
    torch.backends.cudnn.benchmark = True
    model = opt = x = y = None
    try:
        model = TORCH[name]().cuda().train()
        opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=0.0005)
        x = torch.randn(batch, *ITEM.get(name, (3, 224, 224)), device="cuda")
        y = torch.zeros(batch, dtype=torch.long, device="cuda")
        for _ in range(2):
            opt.zero_grad(set_to_none=True)
            out = model(x)
            out = out[0] if isinstance(out, tuple) else out
            F.cross_entropy(out, y).backward()
            opt.step()
        torch.cuda.synchronize()
        return True
    except torch.OutOfMemoryError:
        return False
    finally:
        del model, opt, x, y
        torch.cuda.empty_cache()


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "resnet50"
    low, high = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (64, 2048)
    if not fits(name, low):
        print(f"PyTorch {name}: batch {low} does not fit")
        return
    while high - low > max(8, low // 50):
        mid = (low + high) // 2
        ok = fits(name, mid)
        print(f"PyTorch {name}: batch {mid} {'fits' if ok else 'does not fit'}", flush=True)
        low, high = (mid, high) if ok else (low, mid)
    print(f"PyTorch {name}: the largest FP32 training batch found is {low} (between {low} and {high})")


if __name__ == "__main__":
    main()
