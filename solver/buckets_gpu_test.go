package solver_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/parallel"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// bnSolver trains convolutions with BatchNorm, Scale and ReLU in place
// after them, which cuDNN's BatchNorm computes in one pass (the Scale's
// gradients are complete only after the BatchNorm's backward pass), then
// an inner product, on random data.
const bnSolver = `
net_param {
  layer { name: "data" type: "DummyData" top: "x" top: "y"
    dummy_data_param { shape { dim: 8 dim: 3 dim: 16 dim: 16 } shape { dim: 8 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false weight_filler { type: "msra" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "c1" top: "c1" }
  layer { name: "scale1" type: "Scale" bottom: "c1" top: "c1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "c1" top: "c1" }
  layer { name: "conv2" type: "Convolution" bottom: "c1" top: "c2"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false weight_filler { type: "msra" } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "c2" top: "c2" }
  layer { name: "scale2" type: "Scale" bottom: "c2" top: "c2" scale_param { bias_term: true } }
  layer { name: "relu2" type: "ReLU" bottom: "c2" top: "c2" }
  layer { name: "pool" type: "Pooling" bottom: "c2" top: "p" pooling_param { pool: AVE global_pooling: true } }
  layer { name: "ip" type: "InnerProduct" bottom: "p" top: "z"
    inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "z" bottom: "y" top: "loss" }
}
base_lr: 0.05 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed" max_iter: 12 display: 0
random_seed: 1701 snapshot_after_train: false
`

// twoRanks makes an NCCL job of GPUs 0 and 1, or skips.
func twoRanks(t *testing.T) ([]*device.Context, []parallel.Comm) {
	t.Helper()
	if !cuda.Available() || !cuda.NCCLAvailable() {
		t.Skip("built without CUDA and NCCL (go test -tags cuda,nccl on a machine of two GPUs)")
	}
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		t.Skipf("needs two GPUs, found %d (%v)", n, err)
	}
	ctxs := make([]*device.Context, 2)
	for i := range ctxs {
		d, err := cuda.GetDevice(i)
		if err != nil {
			t.Fatal(err)
		}
		ctxs[i] = device.New(d)
	}
	comms, err := parallel.NewNCCLGroup(ctxs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return ctxs, comms
}

// jobRun is what a two-rank run left: rank 0's learnable parameters and
// its log.
type jobRun struct {
	params [][]float32
	log    *logtest.Recorder
	timing string
}

// trainJob trains the solver of text, changed by edit, on both ranks, one
// goroutine each, with opts (its Context, Comm and Logger set here), and
// returns rank 0's result; with timeline, rank 0's last pass's bucket
// timeline too.
func trainJob(t *testing.T, text string, edit func(*caffepb.SolverParameter), opts solver.Options, timeline bool) jobRun {
	t.Helper()
	ctxs, comms := twoRanks(t)
	run := jobRun{log: &logtest.Recorder{}}
	errs := make([]error, len(ctxs))
	var wg sync.WaitGroup
	for r := range ctxs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				p := &caffepb.SolverParameter{}
				if err := protoio.ParseText([]byte(text), p); err != nil {
					return err
				}
				if edit != nil {
					edit(p)
				}
				o := opts
				o.Context, o.Comm = ctxs[r], comms[r]
				if r == 0 {
					o.Logger = run.log.Logger()
				}
				s, err := solver.New[float32](p, o)
				if err != nil {
					return err
				}
				defer s.Close()
				if s.GradientBuckets() == nil {
					return fmt.Errorf("rank %d: a GPU rank without gradient buckets", r)
				}
				if timeline {
					if err := s.GradientBuckets().EnableTimeline(); err != nil {
						return err
					}
				}
				if err := s.Solve(""); err != nil {
					return err
				}
				if r == 0 {
					for _, b := range s.Net().LearnableParams() {
						run.params = append(run.params, slices.Clone(b.CPUData()))
					}
					if timeline {
						var err error
						if run.timing, err = s.GradientBuckets().Timeline(); err != nil {
							return err
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return run
}

// closeRuns fails unless a's and b's parameters agree within 1e-5
// relative to 1 + |value|: the last-bit differences the GPU's reductions
// (cuDNN's algorithms among them) leave between any two runs, as in
// TestCUDAGraphMatchesEager. A gradient all-reduced before it was
// complete leaves a rank's own gradient in it instead of the mean,
// differences of the order of the learning rate times the gradient.
func closeRuns(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	worst, at := 0.0, -1
	for i := range a {
		for j := range a[i] {
			if d := math.Abs(float64(a[i][j])-float64(b[i][j])) / (1 + math.Abs(float64(b[i][j]))); !(d <= worst) {
				worst, at = d, i
			}
		}
	}
	if !(worst <= 1e-5) {
		t.Errorf("%s: parameters differ by up to %g (parameter %d), tolerance 1e-5", what, worst, at)
	} else {
		t.Logf("%s: parameters differ by up to %g", what, worst)
	}
}

// Two GPUs reducing their gradients bucket by bucket during the backward
// pass (a bucket per gradient here), recorded in a CUDA graph with the
// all-reduces, end with the weights of the same job replaying nothing
// and of one reducing after the backward pass: no bucket is all-reduced
// before its gradients are complete, BatchNorm's fused Scale included.
func TestTwoGPUsBucketsOverlap(t *testing.T) {
	graph := trainJob(t, bnSolver, nil, solver.Options{GradientBucketBytes: 1}, false)
	if _, ok := graph.log.Find("recorded as a CUDA graph"); !ok {
		t.Errorf("the job recorded no CUDA graph:\n%v", graph.log.Lines())
	}
	if l, ok := graph.log.Find("Gradients all-reduced in"); ok {
		t.Log(l.Message)
	}
	eager := trainJob(t, bnSolver, nil, solver.Options{GradientBucketBytes: 1, NoCUDAGraphs: true}, false)
	after := trainJob(t, bnSolver, nil, solver.Options{NoCUDAGraphs: true, NoGradientOverlap: true}, false)
	closeRuns(t, "graph against eager", graph.params, eager.params)
	closeRuns(t, "overlapped against after the backward pass", eager.params, after.params)

	// iter_size 2: all buckets after the second pass, graph or not.
	graph2 := trainJob(t, bnSolver, iterSize2, solver.Options{GradientBucketBytes: 1}, false)
	eager2 := trainJob(t, bnSolver, iterSize2, solver.Options{GradientBucketBytes: 1, NoCUDAGraphs: true}, false)
	closeRuns(t, "iter_size 2: graph against eager", graph2.params, eager2.params)
}

func iterSize2(p *caffepb.SolverParameter) { p.IterSize = proto.Int32(2) }

// mlpSolver has gradients of 36 MB, several buckets.
const mlpSolver = `
net_param {
  layer { name: "data" type: "DummyData" top: "x" top: "y"
    dummy_data_param { shape { dim: 256 dim: 256 } shape { dim: 256 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 3 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h1" inner_product_param { num_output: 2048 weight_filler { type: "xavier" } } }
  layer { name: "relu1" type: "ReLU" bottom: "h1" top: "h1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "h1" top: "h2" inner_product_param { num_output: 2048 weight_filler { type: "xavier" } } }
  layer { name: "relu2" type: "ReLU" bottom: "h2" top: "h2" }
  layer { name: "ip3" type: "InnerProduct" bottom: "h2" top: "h3" inner_product_param { num_output: 2048 weight_filler { type: "xavier" } } }
  layer { name: "relu3" type: "ReLU" bottom: "h3" top: "h3" }
  layer { name: "ip4" type: "InnerProduct" bottom: "h3" top: "z" inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "z" bottom: "y" top: "loss" }
}
base_lr: 0.01 momentum: 0.9 lr_policy: "fixed" max_iter: 5 display: 0
random_seed: 1701 snapshot_after_train: false
`

// The timeline of a pass run as written: the buckets of the last layers
// are all-reduced while the backward pass of the first ones runs (the
// log shows the times; the test checks that there are several buckets).
func TestTwoGPUsBucketTimeline(t *testing.T) {
	run := trainJob(t, mlpSolver, nil, solver.Options{NoCUDAGraphs: true}, true)
	t.Log(run.timing)
	if n := strings.Count(run.timing, "bucket "); n < 2 {
		t.Errorf("%d buckets, want several: %s", n, run.timing)
	}
	// A model's solver (tools/gpu/time_nets.py writes them), when given:
	// GOCAFFE_TIMELINE_SOLVER=/tmp/nets/resnet50_time_solver.prototxt.
	path := os.Getenv("GOCAFFE_TIMELINE_SOLVER")
	if path == "" {
		return
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	few := func(p *caffepb.SolverParameter) { p.MaxIter, p.Display = proto.Int32(6), proto.Int32(0) }
	run = trainJob(t, string(text), few, solver.Options{NoCUDAGraphs: true}, true)
	t.Logf("%s: %s", path, run.timing)
}
