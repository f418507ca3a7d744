package parallel_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/parallel"
)

// ncclContext returns GPU 0's context, skipping without CUDA and NCCL.
func ncclContext(t *testing.T) *device.Context {
	t.Helper()
	d := cudatest.Device(t)
	if !cuda.NCCLAvailable() {
		t.Skip("built without NCCL (go test -tags cuda,nccl runs this test)")
	}
	return device.New(d)
}

// exercise runs every collective of a one-rank NCCL communicator on GPU
// blobs: with one rank each leaves the values as they were, but the calls,
// the stream ordering and the copies are those of N ranks.
func exercise(t *testing.T, comm parallel.Comm, ctx *device.Context) {
	t.Helper()
	if comm.Rank() != 0 || comm.Size() != 1 || comm.Device() != ctx.Device() {
		t.Fatalf("%v on %v: rank %d of %d", comm, comm.Device(), comm.Rank(), comm.Size())
	}
	w, _ := blob.New[float32](3, 4)
	w.SetDevice(ctx.Device())
	want := make([]float32, 12)
	for i := range want {
		want[i] = float32(i) - 5.5
	}
	w.SetCPUData(want)
	w.SetCPUDiff(want)
	if err := parallel.BroadcastData(comm, []*blob.Blob[float32]{w}); err != nil {
		t.Fatal(err)
	}
	g := parallel.NewGradients(comm, []*blob.Blob[float32]{w})
	if err := g.Reduce(); err != nil {
		t.Fatal(err)
	}
	for i, v := range w.CPUDiff() { // copies back from the device
		if v != want[i] || w.CPUData()[i] != want[i] {
			t.Fatalf("element %d: data %v diff %v after one-rank collectives, want %v", i, w.CPUData()[i], v, want[i])
		}
	}
	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
	a := parallel.NewAgree(comm, 2)
	defer a.Close()
	if got, err := a.Union(2); err != nil || got != 2 {
		t.Errorf("Union(10) = %b, %v", got, err)
	}
	w.MutableGPUDiff() // the head on the device, as after a backward pass
	if n := testing.AllocsPerRun(20, func() { g.Reduce() }); n != 0 {
		t.Errorf("Reduce on the GPU allocates %v times per call", n)
	}
}

func TestNCCLGroupOfOne(t *testing.T) {
	ctx := ncclContext(t)
	comms, err := parallel.NewNCCLGroup([]*device.Context{ctx})
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, comms[0], ctx)
	if err := comms[0].Close(); err != nil {
		t.Error(err)
	}
}

// A torchrun-style job of one rank goes through the rendezvous's code.
func TestNCCLFromEnvOfOne(t *testing.T) {
	ctx := ncclContext(t)
	comm, err := parallel.NewNCCLFromEnv(ctx, parallel.Launch{Rank: 0, WorldSize: 1, MasterAddr: "127.0.0.1", MasterPort: 29511}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, comm, ctx)
	if err := comm.Close(); err != nil {
		t.Error(err)
	}
}

// NCCL refuses a host context; MPI refuses device buffers, NCCL host ones.
func TestNCCLNeedsAGPU(t *testing.T) {
	if _, err := parallel.NewNCCLGroup([]*device.Context{device.New(nil)}); err == nil {
		t.Error("NewNCCLGroup on the host succeeded")
	}
}
