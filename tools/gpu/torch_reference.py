"""PyTorch reference figures for gocaffe's GPU benchmarks, measured on the
same machine in the same run: SGEMM 4096^3 in strict FP32 and TF32,
host/device copy bandwidth (pinned and pageable), and the forward and
backward of the layers gocaffe's layer benchmarks time (cuDNN, strict
FP32). Timed with CUDA events, median of repeated runs after warm-up."""
import statistics
import torch


def timed(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    n = 4096
    a = torch.rand(n, n, device="cuda") - 0.5
    b = torch.rand(n, n, device="cuda") - 0.5
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ms = timed(lambda: torch.mm(a, b))
        print(f"torch.mm 4096^3 {'tf32' if tf32 else 'fp32'}: {2 * n**3 / (ms / 1e3) / 1e12:.1f} TFLOP/s ({ms:.3f} ms)")
    torch.backends.cuda.matmul.allow_tf32 = False
    for mb in (4, 256):
        nbytes = mb << 20
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        for pinned in (True, False):
            host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
            h2d = timed(lambda: dev.copy_(host, non_blocking=False))
            d2h = timed(lambda: host.copy_(dev, non_blocking=False))
            kind = "pinned" if pinned else "pageable"
            print(f"torch copy {mb}MB {kind}: HtoD {nbytes / h2d / 1e6:.1f} GB/s, DtoH {nbytes / d2h / 1e6:.1f} GB/s")


def layers():
    """cuDNN per layer, strict FP32, the shapes of BenchmarkLayersGPU."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    convs = [("lenet_conv2", (64, 20, 12, 12), 50, 5, 0, 1),
             ("caffenet_conv2", (256, 96, 27, 27), 256, 5, 2, 2)]
    for name, shape, out, k, pad, groups in convs:
        x = torch.randn(*shape, device="cuda")
        w = torch.randn(out, shape[1] // groups, k, k, device="cuda") * 0.01
        b = torch.randn(out, device="cuda")
        fwd = lambda: torch.nn.functional.conv2d(x, w, b, padding=pad, groups=groups)
        y = fwd()
        dy = torch.randn_like(y)
        bwd = lambda: torch.ops.aten.convolution_backward(
            dy, x, w, [out], [1, 1], [pad, pad], [1, 1], False, [0, 0], groups, [True, True, True])
        print(f"cudnn {name}: forward {timed(fwd):.3f} ms, backward {timed(bwd):.3f} ms")
    x = torch.randn(256, 9216, device="cuda")
    w = torch.randn(4096, 9216, device="cuda") * 0.005
    b = torch.randn(4096, device="cuda")
    dy = torch.randn(256, 4096, device="cuda")
    fwd = lambda: torch.addmm(b, x, w.t())
    bwd = lambda: (dy @ w, dy.t() @ x, dy.sum(0))
    print(f"cublas caffenet_fc6: forward {timed(fwd):.3f} ms, backward {timed(bwd):.3f} ms")


if __name__ == "__main__":
    main()
    layers()
