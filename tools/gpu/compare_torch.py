#!/usr/bin/env python3
"""gocaffe against PyTorch on the same GPU, in one run: one training
iteration (forward, loss, backward, SGD with momentum) of each model at its
batch, strict FP32 and then TF32, with images/s and peak device memory.

gocaffe: `gocaffe train -gpu 0 [-tf32]` on the models with their Data layers
replaced by constant DummyData (time_nets.py), the iteration time read from
the display lines after the first interval. PyTorch: the same nets written
here layer for layer (Caffe's ceil-rounded pooling, LRN, GoogLeNet's
auxiliary classifiers, ResNet-50's stride on the first 1x1, MobileNet v1),
eager mode, channels first, cudnn.benchmark = True, CUDA events around 30
iterations after 10 of warm-up.

gocaffe's MiB is what it held while training (its allocations are made
before the first iteration), "(peak)" the whole run's with the setup's
cuDNN searches; PyTorch's is its peak after warm-up.

usage: compare_torch.py GOCAFFE_BINARY NETS_DIR [models] [-- gocaffe flags]
COMPARE_MATH picks the maths, a comma-separated list of fp32, tf32, bf16
and fp16 (default fp32,tf32): bf16 and fp16 run gocaffe with -precision
and -tf32, PyTorch with autocast, channels_last and TF32 (fp16 with
GradScaler). COMPARE_TORCH adds PyTorch variants, comma-separated: cf and
cl (eager, channels first or channels_last) and compile (torch.compile,
channels_last); the table then adds PyTorch's fastest time and variant.
"""
import os
import re
import statistics
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = {"lenet": 64, "cifar10_quick": 100, "caffenet": 256, "googlenet": 64, "resnet50": 64, "mobilenet": 64}
ITEM = {"lenet": (1, 28, 28), "cifar10_quick": (3, 32, 32), "caffenet": (3, 227, 227)}


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 20, 5), nn.Conv2d(20, 50, 5)
        self.f1, self.f2 = nn.Linear(800, 500), nn.Linear(500, 10)

    def forward(self, x):
        x = F.max_pool2d(self.c1(x), 2, 2)
        x = F.max_pool2d(self.c2(x), 2, 2)
        return self.f2(F.relu(self.f1(x.flatten(1))))


class CifarQuick(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(3, 32, 5, padding=2), nn.Conv2d(32, 32, 5, padding=2), nn.Conv2d(32, 64, 5, padding=2)
        self.f1, self.f2 = nn.Linear(1024, 64), nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.c1(x), 3, 2, ceil_mode=True))
        x = F.avg_pool2d(F.relu(self.c2(x)), 3, 2, ceil_mode=True)
        x = F.avg_pool2d(F.relu(self.c3(x)), 3, 2, ceil_mode=True)
        return self.f2(self.f1(x.flatten(1)))


def lrn(x):
    return F.local_response_norm(x, 5, alpha=1e-4, beta=0.75, k=1.0)


class CaffeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 96, 11, 4)
        self.c2 = nn.Conv2d(96, 256, 5, padding=2, groups=2)
        self.c3 = nn.Conv2d(256, 384, 3, padding=1)
        self.c4 = nn.Conv2d(384, 384, 3, padding=1, groups=2)
        self.c5 = nn.Conv2d(384, 256, 3, padding=1, groups=2)
        self.f6, self.f7, self.f8 = nn.Linear(9216, 4096), nn.Linear(4096, 4096), nn.Linear(4096, 1000)

    def forward(self, x):
        x = lrn(F.max_pool2d(F.relu(self.c1(x)), 3, 2, ceil_mode=True))
        x = lrn(F.max_pool2d(F.relu(self.c2(x)), 3, 2, ceil_mode=True))
        x = F.relu(self.c5(F.relu(self.c4(F.relu(self.c3(x))))))
        x = F.max_pool2d(x, 3, 2, ceil_mode=True).flatten(1)
        x = F.dropout(F.relu(self.f6(x)), 0.5, self.training)
        x = F.dropout(F.relu(self.f7(x)), 0.5, self.training)
        return self.f8(x)


class Inception(nn.Module):
    def __init__(self, cin, c1, r3, c3, r5, c5, pp):
        super().__init__()
        self.b1 = nn.Conv2d(cin, c1, 1)
        self.r3, self.b3 = nn.Conv2d(cin, r3, 1), nn.Conv2d(r3, c3, 3, padding=1)
        self.r5, self.b5 = nn.Conv2d(cin, r5, 1), nn.Conv2d(r5, c5, 5, padding=2)
        self.pp = nn.Conv2d(cin, pp, 1)

    def forward(self, x):
        return torch.cat([F.relu(self.b1(x)), F.relu(self.b3(F.relu(self.r3(x)))),
                          F.relu(self.b5(F.relu(self.r5(x)))),
                          F.relu(self.pp(F.max_pool2d(x, 3, 1, 1, ceil_mode=True)))], 1)


class Aux(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.conv, self.fc, self.cls = nn.Conv2d(cin, 128, 1), nn.Linear(2048, 1024), nn.Linear(1024, 1000)

    def forward(self, x):
        x = F.relu(self.conv(F.avg_pool2d(x, 5, 3, ceil_mode=True))).flatten(1)
        return self.cls(F.dropout(F.relu(self.fc(x)), 0.7, self.training))


class GoogLeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.r2, self.c2 = nn.Conv2d(3, 64, 7, 2, 3), nn.Conv2d(64, 64, 1), nn.Conv2d(64, 192, 3, padding=1)
        self.i3a, self.i3b = Inception(192, 64, 96, 128, 16, 32, 32), Inception(256, 128, 128, 192, 32, 96, 64)
        self.i4a = Inception(480, 192, 96, 208, 16, 48, 64)
        self.i4b, self.i4c = Inception(512, 160, 112, 224, 24, 64, 64), Inception(512, 128, 128, 256, 24, 64, 64)
        self.i4d, self.i4e = Inception(512, 112, 144, 288, 32, 64, 64), Inception(528, 256, 160, 320, 32, 128, 128)
        self.i5a, self.i5b = Inception(832, 256, 160, 320, 32, 128, 128), Inception(832, 384, 192, 384, 48, 128, 128)
        self.aux1, self.aux2, self.cls = Aux(512), Aux(528), nn.Linear(1024, 1000)

    def forward(self, x):
        x = lrn(F.max_pool2d(F.relu(self.c1(x)), 3, 2, ceil_mode=True))
        x = F.max_pool2d(lrn(F.relu(self.c2(F.relu(self.r2(x))))), 3, 2, ceil_mode=True)
        x = F.max_pool2d(self.i3b(self.i3a(x)), 3, 2, ceil_mode=True)
        x = self.i4a(x)
        a1 = self.aux1(x) if self.training else None
        x = self.i4d(self.i4c(self.i4b(x)))
        a2 = self.aux2(x) if self.training else None
        x = F.max_pool2d(self.i4e(x), 3, 2, ceil_mode=True)
        x = F.avg_pool2d(self.i5b(self.i5a(x)), 7, 1).flatten(1)
        return self.cls(F.dropout(x, 0.4, self.training)), a1, a2


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, project):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, width, 1, stride, bias=False), nn.BatchNorm2d(width), nn.ReLU(True))
        self.b = nn.Sequential(nn.Conv2d(width, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(True))
        self.c = nn.Sequential(nn.Conv2d(width, 4 * width, 1, bias=False), nn.BatchNorm2d(4 * width))
        self.proj = nn.Sequential(nn.Conv2d(cin, 4 * width, 1, stride, bias=False), nn.BatchNorm2d(4 * width)) if project else None

    def forward(self, x):
        s = self.proj(x) if self.proj is not None else x
        return F.relu(s + self.c(self.b(self.a(x))))


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(True))
        blocks, cin = [], 64
        for s, (n, w) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
            for k in range(n):
                blocks.append(Bottleneck(cin, w, 2 if k == 0 and s > 0 else 1, k == 0))
                cin = 4 * w
        self.blocks, self.fc = nn.Sequential(*blocks), nn.Linear(2048, 1000)

    def forward(self, x):
        x = F.max_pool2d(self.stem(x), 3, 2, ceil_mode=True)
        return self.fc(F.avg_pool2d(self.blocks(x), 7, 1).flatten(1))


class MobileNet(nn.Module):
    def __init__(self):
        super().__init__()
        def unit(cin, cout, k, s, g):
            return [nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]
        layers, c = unit(3, 32, 3, 2, 1), 32
        for out, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
                       (512, 1), (512, 1), (1024, 2), (1024, 1)]:
            layers += unit(c, c, 3, s, c) + unit(c, out, 1, 1, 1)
            c = out
        self.features, self.fc = nn.Sequential(*layers), nn.Linear(1024, 1000)

    def forward(self, x):
        return self.fc(F.avg_pool2d(self.features(x), 7, 1).flatten(1))


TORCH = {"lenet": LeNet, "cifar10_quick": CifarQuick, "caffenet": CaffeNet, "googlenet": GoogLeNet,
         "resnet50": ResNet50, "mobilenet": MobileNet}


def torch_iteration(name, math, variant="eager"):
    """One iteration's time and peak memory in math: fp32, tf32, or bf16 and
    fp16 as a user who wants speed runs them (autocast, TF32 for what stays
    FP32; fp16 with GradScaler's loss scaling). variant: "eager" (channels
    first in FP32 and TF32, channels_last in bf16 and fp16), "cf" or "cl"
    (eager, channels first or channels_last) or "compile" (torch.compile of
    the model, channels_last)."""
    tf32 = math != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    model = TORCH[name]().cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=0.0005)
    item = ITEM.get(name, (3, 224, 224))
    x = torch.full((BATCH[name],) + item, 0.5, device="cuda")
    y = torch.ones(BATCH[name], dtype=torch.long, device="cuda")
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(math)
    last = variant in ("cl", "compile") or (variant == "eager" and half is not None)
    if last:
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    run = torch.compile(model) if variant == "compile" else model
    scaler = torch.amp.GradScaler("cuda", enabled=half == torch.float16)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=half or torch.float32, enabled=half is not None):
            out = run(x)
            if isinstance(out, tuple):
                loss = F.cross_entropy(out[0], y) + 0.3 * F.cross_entropy(out[1], y) + 0.3 * F.cross_entropy(out[2], y)
            else:
                loss = F.cross_entropy(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(30):
        step()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end) / 30
    peak = torch.cuda.max_memory_allocated() / 2**20
    del model, run, opt
    torch.cuda.empty_cache()
    if variant == "compile":
        torch._dynamo.reset()
    return ms, peak


def gocaffe_iteration(binary, nets, name, math):
    cmd = [binary, "train", "-solver", f"{nets}/{name}_time_solver.prototxt", "-gpu", "0"] + EXTRA
    if math != "fp32":
        cmd.append("-tf32")
    if math in ("bf16", "fp16"):
        cmd += ["-precision", math]
    log = subprocess.run(cmd, capture_output=True, text=True).stderr
    rates = [float(m.group(2)) for m in re.finditer(r"Iteration (\d+) \(([0-9.]+) iter/s", log) if int(m.group(1)) >= 100]
    # The memory held while training (PyTorch's peak is taken after its
    # warm-up too), and the whole run's peak with the setup's searches;
    # older binaries log the latter only.
    m = re.search(r"Peak device memory on GPU 0: ([0-9.]+) MiB \(held by gocaffe's allocations(?:; ([0-9.]+) MiB held while training)?", log)
    if not rates:
        raise SystemExit(f"gocaffe {name}: no iteration rate in the log:\n{log[-3000:]}")
    peak = float(m.group(1)) if m else float("nan")
    held = float(m.group(2)) if m and m.group(2) else peak
    return 1000 / statistics.median(rates), held, peak


EXTRA = []


def torch_best(name, math, variants):
    """The default variant's time and memory, and the fastest variant's
    time and name (COMPARE_TORCH lists the variants; PyTorch's best, as
    the precision issue asks, is the fastest of cf, cl and compile)."""
    ms, mem = torch_iteration(name, math)
    best, which = ms, "eager"
    for v in variants:
        if v == "eager":
            continue
        t, _ = torch_iteration(name, math, v)
        if t < best:
            best, which = t, v
    return ms, mem, best, which


def main():
    global EXTRA
    args = sys.argv[1:]
    if "--" in args:
        args, EXTRA = args[:args.index("--")], args[args.index("--") + 1:]
    binary, nets = args[0], args[1]
    names = args[2].split(",") if len(args) > 2 else list(TORCH)
    variants = [v for v in os.environ.get("COMPARE_TORCH", "").split(",") if v]
    best = f" | {'best ms':>8} {'variant':8} ratio" if variants else ""
    print(f"{'model, batch':24} {'math':5} {'gocaffe ms':>10} {'img/s':>8} {'MiB':>7} {'(peak)':>7} | {'PyTorch ms':>10} {'img/s':>8} {'MiB':>7} | ratio" + best)
    maths = os.environ.get("COMPARE_MATH", "fp32,tf32").split(",")
    for math in maths:
        for name in names:
            g, gmem, gpeak = gocaffe_iteration(binary, nets, name, math)
            t, tmem, tb, which = torch_best(name, math, variants)
            b = BATCH[name]
            line = (f"{name + ', ' + str(b):24} {math:5} {g:10.2f} {b * 1000 / g:8.0f} {gmem:7.0f} {gpeak:7.0f} | "
                    f"{t:10.2f} {b * 1000 / t:8.0f} {tmem:7.0f} | {g / t:.2f}")
            if variants:
                line += f" | {tb:8.2f} {which:8} {g / tb:.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
