#!/usr/bin/env python3
"""PyTorch's time for the three convolution passes on ResNet-50's shapes at
batch 64 (strict FP32, cudnn.benchmark), to set beside gocaffe's
`go test -tags cuda -bench ConvResNet50 ./cuda/` of the same shapes.

usage: tools/gpu/conv_shapes.py [fp32|tf32|bf16] [cf|cl]

bf16 runs the tensors in bfloat16 (TF32 allowed), cl stores them
channels_last (`go test -tags cuda -bench ConvLayouts ./cuda/` times
gocaffe's cuDNN calls in both layouts).
"""
import sys
import torch

SHAPES = [  # name, n, c, hw, k, r, stride, pad: as cuda/bench_conv_cuda_test.go
    ("conv1_7x7s2_3-64_224", 64, 3, 224, 64, 7, 2, 3),
    ("3x3_64_56", 64, 64, 56, 64, 3, 1, 1),
    ("1x1_64-256_56", 64, 64, 56, 256, 1, 1, 0),
    ("1x1_256-64_56", 64, 256, 56, 64, 1, 1, 0),
    ("3x3_128_28", 64, 128, 28, 128, 3, 1, 1),
    ("3x3_256_14", 64, 256, 14, 256, 3, 1, 1),
    ("1x1_1024-256_14", 64, 1024, 14, 256, 1, 1, 0),
    ("3x3_512_7", 64, 512, 7, 512, 3, 1, 1),
]
math = sys.argv[1] if len(sys.argv) > 1 else "fp32"
layout = sys.argv[2] if len(sys.argv) > 2 else "cf"
tf32 = math in ("tf32", "bf16")
dtype = torch.bfloat16 if math == "bf16" else torch.float32
fmt = torch.channels_last if layout == "cl" else torch.contiguous_format
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = tf32
torch.backends.cuda.matmul.allow_tf32 = tf32


def timed(f, iters=50):
    for _ in range(5):
        f()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    for _ in range(iters):
        f()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / iters


for name, n, c, hw, k, r, st, pad in SHAPES:
    x = (torch.rand(n, c, hw, hw, device="cuda") - 0.5).to(dtype).contiguous(memory_format=fmt)
    w = (torch.rand(k, c, r, r, device="cuda") - 0.5).to(dtype).contiguous(memory_format=fmt)
    y = torch.nn.functional.conv2d(x, w, stride=st, padding=pad)
    dy = (torch.rand_like(y) - 0.5).contiguous(memory_format=fmt)
    cb = torch.ops.aten.convolution_backward
    args = (dy, x, w, None, [st, st], [pad, pad], [1, 1], False, [0, 0], 1)
    fwd = timed(lambda: torch.nn.functional.conv2d(x, w, stride=st, padding=pad))
    bd = timed(lambda: cb(*args, [True, False, False]))
    bf = timed(lambda: cb(*args, [False, True, False]))
    print(f"{math} {layout} {name:24s} fwd {fwd:7.3f} bwd_data {bd:7.3f} bwd_filter {bf:7.3f} ms  sum {fwd+bd+bf:7.3f}")
