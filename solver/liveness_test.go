package solver_test

import (
	"bytes"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// lenetSolver trains LeNet on refilled Gaussian DummyData, with a test
// net.
const lenetSolver = `
net_param {
  name: "LeNet"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 8 dim: 1 dim: 28 dim: 28 } shape { dim: 8 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 3 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } } }
  layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
    convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } } }
  layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
    inner_product_param { num_output: 500 weight_filler { type: "xavier" } } }
  layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
  layer { name: "accuracy" type: "Accuracy" bottom: "ip2" bottom: "label" top: "accuracy" include { phase: TEST } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
}
test_iter: 2 test_interval: 3 test_initialization: true
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed" max_iter: 6 display: 1
random_seed: 7 snapshot_after_train: false
`

// branchSolver trains a net with branches: a blob read by several layers
// (Split), in-place BatchNorm, Scale and ReLU, a residual sum, a
// concatenation, a Flatten aliasing its bottom, Dropout, Sigmoid and an
// element-wise product.
const branchSolver = `
net_param {
  name: "branches"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 10 dim: 10 } shape { dim: 4 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 6 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "sc1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 6 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "sig" type: "Sigmoid" bottom: "conv2" top: "sig" }
  layer { name: "sum" type: "Eltwise" bottom: "conv1" bottom: "sig" top: "sum" }
  layer { name: "prod" type: "Eltwise" bottom: "sum" bottom: "conv2" top: "prod" eltwise_param { operation: PROD } }
  layer { name: "cat" type: "Concat" bottom: "prod" bottom: "sum" top: "cat" }
  layer { name: "pool" type: "Pooling" bottom: "cat" top: "pool" pooling_param { pool: AVE kernel_size: 2 stride: 2 } }
  layer { name: "flat" type: "Flatten" bottom: "pool" top: "flat" }
  layer { name: "drop" type: "Dropout" bottom: "flat" top: "flat" dropout_param { dropout_ratio: 0.3 } }
  layer { name: "ip" type: "InnerProduct" bottom: "flat" top: "ip"
    inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "tanh" type: "TanH" bottom: "ip" top: "tanh" }
  layer { name: "ip2" type: "InnerProduct" bottom: "tanh" top: "ip2"
    inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
}
test_iter: 2 test_interval: 3 test_initialization: true
base_lr: 0.05 momentum: 0.9 weight_decay: 0.001 lr_policy: "fixed" max_iter: 6 display: 1
random_seed: 11 snapshot_after_train: false
`

// Training with the liveness pass's memory reuse gives the losses, test
// outputs and weights of training without, bit for bit, and uses less
// memory.
func TestTrainingWithMemoryReuse(t *testing.T) {
	rate := regexp.MustCompile(`\([0-9.e+-]+ iter/s, [^)]*\)`)
	for _, tc := range []struct{ name, param string }{{"LeNet", lenetSolver}, {"branches", branchSolver}} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(noReuse bool) (*solver.Solver[float32], []string) {
				var buf bytes.Buffer
				p := &caffepb.SolverParameter{}
				if err := protoio.ParseText([]byte(tc.param), p); err != nil {
					t.Fatal(err)
				}
				s, err := solver.New[float32](p, solver.Options{
					NoMemoryReuse: noReuse, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Solve(""); err != nil {
					t.Fatal(err)
				}
				var lines []string
				for _, l := range strings.Split(buf.String(), "\n") {
					if strings.Contains(l, "output") || strings.Contains(l, "loss") {
						_, msg, _ := strings.Cut(l, "msg=")
						lines = append(lines, rate.ReplaceAllString(msg, ""))
					}
				}
				return s, lines
			}
			own, ownLog := run(true)
			reuse, reuseLog := run(false)
			if len(ownLog) < 8 || !slices.Equal(ownLog, reuseLog) {
				t.Fatalf("the logs differ:\nown memory:\n%s\nreuse:\n%s", strings.Join(ownLog, "\n"), strings.Join(reuseLog, "\n"))
			}
			sameBits(t, "with and without reuse", own, reuse)
			for _, pass := range reuse.Net().Plan().Passes {
				if pass.Name == "liveness" && !strings.HasPrefix(pass.Summary, "forward and backward") {
					t.Errorf("train net's liveness pass: %q", pass.Summary)
				}
			}
			if a, b := reuse.Net().MemoryReport().Activations, own.Net().MemoryReport().Activations; a >= b {
				t.Errorf("activations take %d bytes with reuse, %d without", a, b)
			}
		})
	}
}

// sameBits fails unless the two solvers' learnable parameters' data and
// diffs agree bit for bit.
func sameBits(t *testing.T, what string, a, b *solver.Solver[float32]) {
	t.Helper()
	bits := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = math.Float32bits(x)
		}
		return out
	}
	for i, p := range a.Net().LearnableParams() {
		q := b.Net().LearnableParams()[i]
		if !slices.Equal(bits(p.CPUData()), bits(q.CPUData())) || !slices.Equal(bits(p.CPUDiff()), bits(q.CPUDiff())) {
			t.Errorf("%s: parameter %d differs after training", what, i)
		}
	}
}
