#!/usr/bin/env python3
"""PyTorch's GPU time per training iteration of one of compare_torch.py's
models, by kind of kernel (convolution/GEMM, batch norm, ReLU, add, other)
and the 25 costliest kernels: what gocaffe's per-layer `gocaffe time -gpu 0`
is compared with. cudnn.benchmark, 10 warm-up iterations, 5 profiled.
MATH is fp32 (strict, the default), tf32 or bf16 (autocast, TF32 for what
stays FP32); LAYOUT cf (channels first, the default) or cl (channels_last).

usage (from the repository root): tools/gpu/torch_profile.py MODEL [MATH [LAYOUT]]
"""
import sys, collections
sys.path.insert(0, "tools/gpu")
import torch, torch.nn.functional as F
from compare_torch import TORCH, BATCH, ITEM
from torch.profiler import profile, ProfilerActivity
name = sys.argv[1]
torch.backends.cudnn.benchmark = True
math = sys.argv[2] if len(sys.argv) > 2 else "fp32"
last = len(sys.argv) > 3 and sys.argv[3] == "cl"
tf32 = math != "fp32"
half = torch.bfloat16 if math == "bf16" else None
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.allow_tf32 = tf32
model = TORCH[name]().cuda().train()
opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=0.0005)
x = torch.full((BATCH[name],) + ITEM.get(name, (3, 224, 224)), 0.5, device="cuda")
y = torch.ones(BATCH[name], dtype=torch.long, device="cuda")
if last:
    model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=half or torch.float32, enabled=half is not None):
        out = model(x)
        loss = F.cross_entropy(out[0] if isinstance(out, tuple) else out, y)
    loss.backward(); opt.step()
for _ in range(10): step()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(5): step()
    torch.cuda.synchronize()
cat = collections.defaultdict(float)
for e in prof.key_averages():
    t = getattr(e, 'self_device_time_total', None) or getattr(e, 'self_cuda_time_total', 0); t = t / 5 / 1000.0  # ms per iteration
    if t <= 0: continue
    n = e.key.lower()
    if 'bn' in n or 'batch_norm' in n or 'batchnorm' in n: k = 'bn'
    elif 'conv' in n or 'gemm' in n or 'sm80' in n or 'sm90' in n or 'xmma' in n or 'cudnn' in n or 'implicit' in n or 'wgrad' in n or 'dgrad' in n: k = 'conv/gemm'
    elif 'threshold' in n or 'relu' in n or 'clamp' in n: k = 'relu'
    elif 'add' in n: k = 'add'
    else: k = 'other'
    cat[k] += t
print(name, math, 'channels_last' if last else 'channels first', {k: round(v, 2) for k, v in cat.items()}, 'total', round(sum(cat.values()), 2))
print(prof.key_averages().table(sort_by="self_cuda_time_total" if not hasattr(prof.key_averages()[0], "self_device_time_total") else "self_device_time_total", row_limit=25))
