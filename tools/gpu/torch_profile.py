#!/usr/bin/env python3
"""PyTorch's GPU time per training iteration of one of compare_torch.py's
models, by kind of kernel (convolution/GEMM, batch norm, ReLU, add, other)
and the 25 costliest kernels: what gocaffe's per-layer `gocaffe time -gpu 0`
is compared with. Strict FP32, cudnn.benchmark, 10 warm-up iterations,
5 profiled.

usage (from the repository root): tools/gpu/torch_profile.py MODEL [tf32]
"""
import sys, collections
sys.path.insert(0, "tools/gpu")
import torch, torch.nn.functional as F
from compare_torch import TORCH, BATCH
from torch.profiler import profile, ProfilerActivity
name = sys.argv[1]
torch.backends.cudnn.benchmark = True
tf32 = len(sys.argv) > 2 and sys.argv[2] == "tf32"
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.allow_tf32 = tf32
model = TORCH[name]().cuda().train()
opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=0.0005)
x = torch.full((BATCH[name], 3, 224, 224), 0.5, device="cuda")
y = torch.ones(BATCH[name], dtype=torch.long, device="cuda")
def step():
    opt.zero_grad(set_to_none=True)
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
print(name, {k: round(v, 2) for k, v in cat.items()}, 'total', round(sum(cat.values()), 2))
print(prof.key_averages().table(sort_by="self_cuda_time_total" if not hasattr(prof.key_averages()[0], "self_device_time_total") else "self_device_time_total", row_limit=25))
