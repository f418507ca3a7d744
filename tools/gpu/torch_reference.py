"""PyTorch reference figures for gocaffe's GPU benchmarks, measured on the
same machine in the same run: SGEMM 4096^3 in strict FP32 and TF32, and
host/device copy bandwidth, pinned and pageable. Timed with CUDA events,
median of repeated runs after warm-up."""
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


if __name__ == "__main__":
    main()
