//go:build cuda

package cuda_test

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// hostBuffer returns n bytes of pinned or pageable (Go heap) memory.
func hostBuffer(b *testing.B, d *cuda.Device, n int, pinned bool) []byte {
	if !pinned {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(i)
		}
		return buf
	}
	buf, err := d.HostAlloc(n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.HostFree(buf) })
	return buf
}

// BenchmarkCopy measures host-to-device and device-to-host bandwidth from
// pinned and pageable memory (MB/s is 10^6 bytes per second).
func BenchmarkCopy(b *testing.B) {
	d := cudatest.Device(b)
	for _, size := range []int{4 << 20, 256 << 20} {
		for _, pinned := range []bool{true, false} {
			kind := "pageable"
			if pinned {
				kind = "pinned"
			}
			host := hostBuffer(b, d, size, pinned)
			dev := cudatest.Alloc(b, d, size)
			name := fmt.Sprintf("%dMB/%s", size>>20, kind)
			b.Run("HtoD/"+name, func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := d.CopyHtoD(dev, host); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("DtoH/"+name, func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := d.CopyDtoH(host, dev); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSgemm4096 times cuBLAS SGEMM at 4096^3 through the binding with
// events on the compute stream, in strict FP32 and with TF32 tensor cores.
func BenchmarkSgemm4096(b *testing.B) {
	d := cudatest.Device(b)
	bl, err := d.Blas()
	if err != nil {
		b.Fatal(err)
	}
	const n = 4096
	size := n * n * 4
	pa, pb, pc := cudatest.Alloc(b, d, size), cudatest.Alloc(b, d, size), cudatest.Alloc(b, d, size)
	// Random-ish operands: never time on zeros.
	host := make([]float32, n*n)
	for i := range host {
		host[i] = float32((i*2654435761)%1000)/1000 - 0.5
	}
	d.CopyHtoD(pa, f32bytes(host))
	d.CopyHtoD(pb, f32bytes(host))
	for _, tf32 := range []bool{false, true} {
		name := "fp32"
		if tf32 {
			name = "tf32"
		}
		b.Run(name, func(b *testing.B) {
			if err := bl.SetTF32(tf32); err != nil {
				b.Fatal(err)
			}
			defer bl.SetTF32(false)
			ms := gpuMillis(b, d, func() error {
				return bl.Sgemm(cuda.NoTrans, cuda.NoTrans, n, n, n, 1, pa, n, pb, n, 0, pc, n)
			})
			b.ReportMetric(2*n*n*n/(ms/1e3)/1e12, "TFLOP/s")
		})
	}
}

// BenchmarkLaunch measures the host-side cost of launching an empty kernel
// through the binding (the device runs them behind; one sync at the end).
func BenchmarkLaunch(b *testing.B) {
	d := cudatest.Device(b)
	mod, err := d.Compile("test_kernels", testKernels)
	if err != nil {
		b.Fatal(err)
	}
	f, err := mod.Function("nothing")
	if err != nil {
		b.Fatal(err)
	}
	var args cuda.Args
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 32}, 0, nil, &args); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Stream().Synchronize(); err != nil {
		b.Fatal(err)
	}
}
