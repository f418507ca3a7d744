package blob

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

func TestGPUAccessors(t *testing.T) {
	cudatest.Device(t)
	forBothTypes(t, testGPUAccessors[float32], testGPUAccessors[float64])
}

func testGPUAccessors[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3)
	defer b.Close()
	for i := range b.MutableCPUData() {
		b.MutableCPUData()[i] = T(i)
	}
	if p, err := b.GPUData(); err != nil || p == 0 || b.Data().Head() != syncedmem.Synced {
		t.Fatalf("GPUData: %#x %v head %v", p, err, b.Data().Head())
	}
	if p, err := b.MutableGPUDiff(); err != nil || p == 0 || b.Diff().Head() != syncedmem.HeadAtGPU {
		t.Fatalf("MutableGPUDiff: %#x %v head %v", p, err, b.Diff().Head())
	}
	if p, err := b.GPUDiff(); err != nil || p == 0 {
		t.Fatalf("GPUDiff: %v", err)
	}
	if p, err := b.MutableGPUData(); err != nil || p == 0 || b.Data().Head() != syncedmem.HeadAtGPU {
		t.Fatalf("MutableGPUData: %v head %v", err, b.Data().Head())
	}
	if !slices.Equal(b.CPUData(), []T{0, 1, 2, 3, 4, 5}) {
		t.Errorf("data after the device round trip: %v", b.CPUData())
	}
}

func TestGPUMathFunctions(t *testing.T) {
	cudatest.Device(t)
	forBothTypes(t, testGPUMathFunctions[float32], testGPUMathFunctions[float64])
}

// test_blob's TestMathFunctions with the heads on the device: asum, sumsq,
// scale and Update computed there (HEAD_AT_GPU and SYNCED) must agree with
// the host loops.
func testGPUMathFunctions[T Float](t *testing.T) {
	for _, synced := range []bool{false, true} {
		b := mustNew[T](t, 2, 3, 4, 5)
		rng := mathfn.NewRNG(7)
		mathfn.RngUniform(b.Count(), -3, 3, b.MutableCPUData(), rng)
		mathfn.RngUniform(b.Count(), -2, 2, b.MutableCPUDiff(), rng)
		data, diff := slices.Clone(b.CPUData()), slices.Clone(b.CPUDiff())
		if synced {
			b.GPUData()
			b.GPUDiff()
		} else {
			b.MutableGPUData()
			b.MutableGPUDiff()
		}
		wantHead := map[bool]syncedmem.Head{false: syncedmem.HeadAtGPU, true: syncedmem.Synced}[synced]
		if b.Data().Head() != wantHead {
			t.Fatalf("head %v, want %v", b.Data().Head(), wantHead)
		}
		var asum, sumsq float64
		for _, v := range data {
			asum += math.Abs(float64(v))
			sumsq += float64(v) * float64(v)
		}
		near(t, "AsumData on the device", float64(b.AsumData()), asum)
		near(t, "SumsqData on the device", float64(b.SumsqData()), sumsq)
		b.ScaleData(0.5)
		if b.Data().Head() != syncedmem.HeadAtGPU {
			t.Errorf("ScaleData did not run on the device: head %v", b.Data().Head())
		}
		b.Update()
		if b.Data().Head() != syncedmem.HeadAtGPU {
			t.Errorf("Update did not run on the device: head %v", b.Data().Head())
		}
		for i, v := range b.CPUData() {
			want := 0.5*float64(data[i]) - float64(diff[i])
			if math.Abs(float64(v)-want) > 1e-5 {
				t.Fatalf("synced=%v: data[%d] = %v after scale and update, want %v", synced, i, v, want)
			}
		}
		b.Close()
	}
}

func TestCopyFromOnDevice(t *testing.T) {
	d := cudatest.Device(t)
	src := mustNew[float32](t, 3, 4)
	for i := range src.MutableCPUData() {
		src.MutableCPUData()[i] = float32(i) * 1.5
	}
	dst := mustNew[float32](t, 3, 4)
	dst.SetDevice(d)
	defer dst.Close()
	defer src.Close()
	if err := dst.CopyFrom(src, false, false); err != nil {
		t.Fatal(err)
	}
	if dst.Data().Head() != syncedmem.HeadAtGPU {
		t.Errorf("GPU-mode CopyFrom left the head at %v", dst.Data().Head())
	}
	if !slices.Equal(dst.CPUData(), src.CPUData()) {
		t.Errorf("copied %v", dst.CPUData())
	}
	if !dst.Data().Pinned() {
		t.Error("GPU-mode blob's host memory is not pinned")
	}
}

// bf16 returns v as a BFLOAT16 device copy holds it.
func bf16(v ...float32) []float32 {
	h := make([]uint16, len(v))
	syncedmem.Narrow(h, v, syncedmem.StorageBFloat16)
	f := make([]float32, len(v))
	syncedmem.Widen(f, h, syncedmem.StorageBFloat16)
	return f
}

// The blob arithmetic of a reduced blob whose head is on the device runs on
// the host: cuBLAS would read the 16-bit device copy as float32.
func TestReducedMathOnDevice(t *testing.T) {
	d := cudatest.Device(t)
	b := mustNew[float32](t, 4)
	b.SetDevice(d)
	defer b.Close()
	if err := b.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	data := []float32{0.1, -1.3, 2.7, 100.3}
	diff := []float32{0.01, 0.5, -0.3, 3.3}
	copy(b.MutableCPUData(), data)
	copy(b.MutableCPUDiff(), diff)
	if _, err := b.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.MutableGPUDiff(); err != nil {
		t.Fatal(err)
	}
	rd, rg := bf16(data...), bf16(diff...)
	var asum, sumsq float32
	for _, v := range rd {
		asum += max(v, -v)
		sumsq += v * v
	}
	if got := b.AsumData(); math.Abs(float64(got-asum)) > 1e-4 {
		t.Errorf("AsumData of a BFLOAT16 blob on the device = %v, want %v", got, asum)
	}
	if got := b.SumsqData(); math.Abs(float64(got-sumsq)) > 1e-2 {
		t.Errorf("SumsqData of a BFLOAT16 blob on the device = %v, want %v", got, sumsq)
	}
	b.Update()
	want := make([]float32, len(rd))
	for i := range want {
		want[i] = rd[i] - rg[i]
	}
	if got := b.CPUData(); !slices.Equal(got, want) {
		t.Errorf("Update of a BFLOAT16 blob on the device: %v, want %v", got, want)
	}
	if _, err := b.MutableGPUDiff(); err != nil {
		t.Fatal(err)
	}
	b.ScaleDiff(2)
	for i := range rg {
		rg[i] *= 2
	}
	if got := b.CPUDiff(); !slices.Equal(got, rg) {
		t.Errorf("ScaleDiff of a BFLOAT16 blob on the device: %v, want %v", got, rg)
	}
}

// A GPU-mode CopyFrom between storages goes through the host; between
// reduced blobs of one storage it copies the 16-bit device copy.
func TestCopyFromOnDeviceAcrossStorages(t *testing.T) {
	d := cudatest.Device(t)
	vals := []float32{0.1, -2.5, 1e5, 3.14159}
	src := mustNew[float32](t, 4)
	src.SetDevice(d)
	defer src.Close()
	copy(src.MutableCPUData(), vals)
	if _, err := src.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	dst := mustNew[float32](t, 4)
	dst.SetDevice(d)
	defer dst.Close()
	if err := dst.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := dst.CopyFrom(src, false, false); err != nil {
		t.Fatal(err)
	}
	if got := dst.CPUData(); !slices.Equal(got, vals) {
		t.Errorf("native -> BFLOAT16 copy: %v, want %v", got, vals)
	}
	// Through dst's device copy: rounded.
	if _, err := dst.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	want := bf16(vals...)
	if got := dst.CPUData(); !slices.Equal(got, want) {
		t.Errorf("BFLOAT16 device round trip: %v, want %v", got, want)
	}
	if _, err := dst.MutableGPUData(); err != nil {
		t.Fatal(err)
	}
	dst2 := mustNew[float32](t, 4)
	dst2.SetDevice(d)
	defer dst2.Close()
	if err := dst2.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := dst2.CopyFrom(dst, false, false); err != nil {
		t.Fatal(err)
	}
	if dst2.Data().Head() != syncedmem.HeadAtGPU {
		t.Errorf("BFLOAT16 -> BFLOAT16 copy left the head at %v, want HEAD_AT_GPU", dst2.Data().Head())
	}
	if got := dst2.CPUData(); !slices.Equal(got, want) {
		t.Errorf("BFLOAT16 -> BFLOAT16 device copy: %v, want %v", got, want)
	}
}
