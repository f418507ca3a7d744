//go:build cuda

package cuda_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/settings"
)

func TestProperties(t *testing.T) {
	d := cudatest.Device(t)
	p, err := d.Properties()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name == "" || p.Major < 3 || p.MultiProcessorCount < 1 || p.TotalGlobalMem < 1<<30 || p.WarpSize != 32 || p.DriverVersion < 12000 {
		t.Errorf("implausible properties: %+v", p)
	}
	t.Logf("%s, compute %d.%d, %d SMs, %.1f GiB, driver %d", p.Name, p.Major, p.Minor, p.MultiProcessorCount, float64(p.TotalGlobalMem)/(1<<30), p.DriverVersion)
	if d2, _ := cuda.GetDevice(0); d2 != d {
		t.Error("GetDevice returned a second Device for the same ordinal")
	}
}

func TestInvalidOrdinal(t *testing.T) {
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []int{-1, n, n + 7} {
		_, err := cuda.GetDevice(o)
		if err == nil || !strings.Contains(err.Error(), "invalid device ordinal") {
			t.Errorf("GetDevice(%d): err = %v", o, err)
		}
	}
}

// An allocation larger than the device is a clear error naming the call,
// the size and CUDA's error name, and the device still works afterwards.
func TestAllocationLargerThanTheDevice(t *testing.T) {
	d := cudatest.Device(t)
	_, err := d.Alloc(1 << 50)
	var cerr *cuda.Error
	if !errors.As(err, &cerr) || cerr.Name != "CUDA_ERROR_OUT_OF_MEMORY" || !strings.Contains(err.Error(), "cuMemAlloc(1125899906842624 bytes") {
		t.Fatalf("1 PiB allocation: err = %v", err)
	}
	p := cudatest.Alloc(t, d, 1024)
	if p == 0 {
		t.Error("allocation after the failed one returned null")
	}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestCopies(t *testing.T) {
	d := cudatest.Device(t)
	src := pattern(1<<20+3, 1)
	a := cudatest.Upload(t, d, src)
	if got := cudatest.Download(t, d, a, len(src)); !bytes.Equal(got, src) {
		t.Fatal("host -> device -> host changed the bytes")
	}
	b := cudatest.Alloc(t, d, len(src))
	if err := d.CopyDtoD(b, a, len(src)); err != nil {
		t.Fatal(err)
	}
	if err := d.Memset(b.Add(10), 0xAB, 5); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), src...)
	copy(want[10:15], bytes.Repeat([]byte{0xAB}, 5))
	if got := cudatest.Download(t, d, b, len(src)); !bytes.Equal(got, want) {
		t.Fatal("device -> device copy or memset wrong")
	}
	if p, err := d.Alloc(0); err != nil || p != 0 || d.Free(0) != nil {
		t.Errorf("zero-size alloc/free: %v %v", p, err)
	}
}

func TestPinnedAsyncCopiesAndEvents(t *testing.T) {
	d := cudatest.Device(t)
	const n = 8 << 20
	host, err := d.HostAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.HostFree(host)
	copy(host, pattern(n, 3))
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start, _ := d.NewEvent()
	end, _ := d.NewEvent()
	defer start.Close()
	defer end.Close()
	p := cudatest.Alloc(t, d, n)
	back, err := d.HostAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.HostFree(back)
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyHtoDAsync(p, host, s); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyDtoHAsync(back, p, s); err != nil {
		t.Fatal(err)
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, host) {
		t.Fatal("async round trip through pinned memory changed the bytes")
	}
	ms, err := cuda.ElapsedMillis(start, end)
	if err != nil || ms <= 0 {
		t.Errorf("elapsed %v ms, %v", ms, err)
	}
	if err := d.Stream().Close(); err == nil {
		t.Error("closing the compute stream succeeded")
	}
}

// Goroutines on many OS threads, none of which ever made a context current
// itself, must all be able to use the device: the binding makes the context
// current inside each call.
func TestAnyThreadCanCallCUDA(t *testing.T) {
	d := cudatest.Device(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a fresh thread for most goroutines
			defer runtime.UnlockOSThread()
			for i := range 20 {
				src := pattern(4096, byte(g+i))
				p, err := d.Alloc(len(src))
				if err != nil {
					errs <- err
					return
				}
				back := make([]byte, len(src))
				if err := d.CopyHtoD(p, src); err != nil {
					errs <- err
				} else if err := d.CopyDtoH(back, p); err != nil {
					errs <- err
				} else if !bytes.Equal(back, src) {
					errs <- errors.New("wrong bytes")
				}
				if err := d.Free(p); err != nil {
					errs <- err
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

const testKernels = `
extern "C" __global__ void axpb(int n, float a, double b, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + (float)b;
}
extern "C" __global__ void nothing() {}
struct five { int v[5]; };
extern "C" __global__ void sum_struct(float scale, five f, int extra, float *out) {
  out[0] = scale * (f.v[0] + f.v[1] + f.v[2] + f.v[3] + f.v[4]) + extra;
}
`

func f32bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func TestCompileAndLaunch(t *testing.T) {
	d := cudatest.Device(t)
	mod, err := d.Compile("test_kernels", testKernels)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.Compile("test_kernels", testKernels); again != mod {
		t.Error("compiling the same source twice did not reuse the module")
	}
	f, err := mod.Function("axpb")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i) - 300
	}
	px := cudatest.Upload(t, d, f32bytes(x))
	py := cudatest.Alloc(t, d, 4*n)
	var args cuda.Args
	args.Int(n).Float32(-1.5).Float64(0.25).Ptr(px).Ptr(py)
	if err := f.Launch(cuda.Dim3{X: (n + 127) / 128}, cuda.Dim3{X: 128}, 0, nil, &args); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n)
	if err := d.CopyDtoH(f32bytes(y), py); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if want := -1.5*x[i] + 0.25; y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
	}
	if _, err := mod.Function("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Errorf("missing kernel: err = %v", err)
	}
	if err := f.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 4096}, 0, nil, &args); err == nil {
		t.Error("launch with 4096 threads per block succeeded")
	}
}

// A struct passed by value takes several argument slots; arguments after it
// must still arrive.
func TestStructArgument(t *testing.T) {
	d := cudatest.Device(t)
	mod, err := d.Compile("test_kernels", testKernels)
	if err != nil {
		t.Fatal(err)
	}
	f, err := mod.Function("sum_struct")
	if err != nil {
		t.Fatal(err)
	}
	out := cudatest.Alloc(t, d, 4)
	var args cuda.Args
	args.Float32(0.5).Int32s([]int32{1, 2, 3, 4, 100}).Int(7).Ptr(out)
	if err := f.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, nil, &args); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 1)
	d.CopyDtoH(f32bytes(got), out)
	if got[0] != 62 {
		t.Errorf("sum_struct = %v, want 0.5*110+7 = 62", got[0])
	}
}

func TestCompileErrorCarriesTheLog(t *testing.T) {
	d := cudatest.Device(t)
	_, err := d.Compile("broken.cu", "extern \"C\" __global__ void k() { undeclared_thing = 1; }\n")
	var cerr *cuda.Error
	if !errors.As(err, &cerr) || cerr.Lib != "NVRTC" || cerr.Name != "NVRTC_ERROR_COMPILATION" ||
		!strings.Contains(cerr.Log, "undeclared_thing") || !strings.Contains(err.Error(), "broken.cu") {
		t.Fatalf("err = %v", err)
	}
}

// The second start of a program finds its kernels in the disk cache; a
// damaged cache entry is compiled again.
func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	cuda.SetCacheDir(settings.CacheDir(dir))
	t.Cleanup(func() { cuda.SetCacheDir(settings.DefaultCacheDir) })
	d := cudatest.Device(t)
	src := testKernels + "// disk cache test " + t.Name() + "\n"
	if _, err := d.Compile("cached", src); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cubin"))
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one .cubin", files)
	}
	compiles := cuda.NVRTCCompiles()
	cuda.ForgetModules(d)
	if _, err := d.Compile("cached", src); err != nil {
		t.Fatal(err)
	}
	if cuda.NVRTCCompiles() != compiles {
		t.Error("a cached kernel was compiled again")
	}
	os.WriteFile(files[0], []byte("garbage"), 0o644)
	cuda.ForgetModules(d)
	mod, err := d.Compile("cached", src)
	if err != nil {
		t.Fatalf("damaged cache entry: %v", err)
	}
	if cuda.NVRTCCompiles() != compiles+1 {
		t.Error("a damaged cache entry was not recompiled")
	}
	if _, err := mod.Function("nothing"); err != nil {
		t.Error(err)
	}
	if b, _ := os.ReadFile(files[0]); string(b) == "garbage" {
		t.Error("the damaged cache entry was not replaced")
	}
}

func TestBlasGemmAndTF32(t *testing.T) {
	d := cudatest.Device(t)
	b, err := d.Blas()
	if err != nil {
		t.Fatal(err)
	}
	// Column-major 2x3 times 3x2.
	a := []float32{1, 4, 2, 5, 3, 6} // [[1 2 3] [4 5 6]]
	bm := []float32{7, 9, 11, 8, 10, 12}
	pa, pb := cudatest.Upload(t, d, f32bytes(a)), cudatest.Upload(t, d, f32bytes(bm))
	pc := cudatest.Alloc(t, d, 16)
	for _, tf32 := range []bool{false, true} {
		if err := b.SetTF32(tf32); err != nil {
			t.Fatal(err)
		}
		if err := b.Sgemm(cuda.NoTrans, cuda.NoTrans, 2, 2, 3, 1, pa, 2, pb, 3, 0, pc, 2); err != nil {
			t.Fatal(err)
		}
		c := make([]float32, 4)
		d.CopyDtoH(f32bytes(c), pc)
		want := []float32{58, 139, 64, 154}
		for i := range c {
			if math.Abs(float64(c[i]-want[i])) > 0.5 {
				t.Errorf("tf32=%v: C = %v, want %v", tf32, c, want)
				break
			}
		}
	}
	if err := b.SetTF32(false); err != nil {
		t.Fatal(err)
	}
	err = b.Sgemm(cuda.NoTrans, cuda.NoTrans, 2, 2, 3, 1, pa, 1, pb, 3, 0, pc, 2) // lda < m
	var cerr *cuda.Error
	if !errors.As(err, &cerr) || cerr.Lib != "cuBLAS" || cerr.Name != "CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("bad lda: err = %v", err)
	}
}

// The calls a training iteration makes allocate nothing on success: the
// description of a failed call is only built when a call fails.
func TestHotPathsDoNotAllocate(t *testing.T) {
	d := cudatest.Device(t)
	mod, err := d.Compile("test_kernels", testKernels)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := mod.Function("nothing")
	bl, _ := d.Blas()
	host := make([]byte, 4096)
	p := cudatest.Alloc(t, d, 4096)
	s, _ := d.NewStream()
	defer s.Close()
	for name, call := range map[string]func(){
		"CopyHtoD":      func() { d.CopyHtoD(p, host) },
		"CopyDtoH":      func() { d.CopyDtoH(host, p) },
		"CopyHtoDAsync": func() { d.CopyHtoDAsync(p, host, s) },
		"Memset":        func() { d.Memset(p, 0, 4096) },
		"Launch": func() {
			var args cuda.Args
			f.Launch(cuda.Dim3{X: 1}, cuda.Dim3{X: 32}, 0, nil, &args)
		},
		"Sgemm":       func() { bl.Sgemm(cuda.NoTrans, cuda.NoTrans, 16, 16, 16, 1, p, 16, p, 16, 0, p, 16) },
		"Sasum":       func() { bl.Sasum(1024, p, 1) },
		"Synchronize": func() { s.Synchronize() },
	} {
		if n := testing.AllocsPerRun(100, call); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

// TestSyncEvent: an ordering-only event waits for the work recorded before
// it, and refuses to time.
func TestSyncEvent(t *testing.T) {
	d := cudatest.Device(t)
	const n = 64 << 20
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := d.NewSyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	host, err := d.HostAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.HostFree(host)
	copy(host, pattern(n, 5))
	p := cudatest.Alloc(t, d, n)
	if err := d.CopyHtoDAsync(p, host, s); err != nil {
		t.Fatal(err)
	}
	back, err := d.HostAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer d.HostFree(back)
	if err := d.CopyDtoHAsync(back, p, s); err != nil {
		t.Fatal(err)
	}
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, host) {
		t.Error("after the event, the copies it follows have not all happened")
	}
	if _, err := cuda.ElapsedMillis(e, e); err == nil {
		t.Error("ElapsedMillis on an event without timing: no error")
	}
}
