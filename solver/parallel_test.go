package solver_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/parallel"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// regressionSolver is a student inner product learning a frozen teacher
// from fresh random inputs, on the GPU.
const regressionSolver = `
net_param {
  layer { name: "data" type: "DummyData" top: "x"
    dummy_data_param { shape { dim: 16 dim: 8 } data_filler { type: "gaussian" std: 1 } } }
  layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target"
    param { lr_mult: 0 } param { lr_mult: 0 }
    inner_product_param { num_output: 3 weight_filler { type: "uniform" min: -1 max: 1 } } }
  layer { name: "student" type: "InnerProduct" bottom: "x" top: "guess"
    inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "target" top: "loss" }
}
base_lr: 0.05 momentum: 0.9 lr_policy: "fixed" max_iter: 30 display: 0
random_seed: 1701 snapshot_after_train: false
`

// trainStudent trains on ctx, with comm if it is not nil, and returns the
// student's weights.
func trainStudent(t *testing.T, ctx *device.Context, comm parallel.Comm) []float32 {
	t.Helper()
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(regressionSolver), p); err != nil {
		t.Fatal(err)
	}
	s, err := solver.New[float32](p, solver.Options{Context: ctx, Comm: comm})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(s.Net().LayerByName("student").LayerBase().Blobs()[0].CPUData())
}

// A solver that is the one rank of an NCCL job runs the job's code (the
// broadcast, the all-reduce of the gradients, the agreement on requests)
// and trains exactly as a solver alone.
func TestOneRankNCCLJobTrainsAsAlone(t *testing.T) {
	d := cudatest.Device(t)
	if !cuda.NCCLAvailable() {
		t.Skip("built without NCCL (go test -tags cuda,nccl runs this test)")
	}
	alone := trainStudent(t, device.New(d), nil)
	ctx := device.New(d)
	comms, err := parallel.NewNCCLGroup([]*device.Context{ctx})
	if err != nil {
		t.Fatal(err)
	}
	defer comms[0].Close()
	job := trainStudent(t, ctx, comms[0])
	if !slices.Equal(alone, job) {
		t.Errorf("weights after 30 iterations differ:\nalone %v\njob   %v", alone, job)
	}
}

// A communicator of another device than the solver's context is refused.
func TestCommOnAnotherDeviceRefused(t *testing.T) {
	d := cudatest.Device(t)
	if !cuda.NCCLAvailable() {
		t.Skip("built without NCCL")
	}
	comms, err := parallel.NewNCCLGroup([]*device.Context{device.New(d)})
	if err != nil {
		t.Fatal(err)
	}
	defer comms[0].Close()
	p := &caffepb.SolverParameter{}
	protoio.ParseText([]byte(regressionSolver), p)
	if _, err := solver.New[float32](p, solver.Options{Comm: comms[0]}); err == nil {
		t.Error("a host solver with a GPU communicator was accepted")
	}
}
