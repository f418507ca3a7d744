package solver_test

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/settings"
	"github.com/gocaffe/gocaffe/solver"
)

// TestUpdateRulesGPU is TestUpdateRules with the net and the update on the
// GPU: SGD's cases take the fused update (one launch for all parameters),
// the other rules the operation-by-operation one.
func TestUpdateRulesGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	for _, c := range updateRuleCases {
		t.Run(c.name, func(t *testing.T) {
			r := c.rule.asStored()
			checkUpdates(t, newSolverWith(t, c.extra, solver.Options{Context: ctx}), &r, 5)
		})
	}
}

// fusedNet has parameters of several chunks of the fused update (4096
// elements) and of less than one, with lr_mult and decay_mult other than 1.
const fusedNet = `
net_param {
  name: "Fused"
  layer { name: "data" type: "Input" top: "data" top: "targets"
    input_param { shape { dim: 16 dim: 700 } shape { dim: 16 dim: 10 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
    param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
    inner_product_param { num_output: 20 weight_filler { type: "gaussian" std: 0.05 } bias_filler { type: "constant" value: 0.1 } } }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    param { lr_mult: 0.5 decay_mult: 3 } param { lr_mult: 0 }
    inner_product_param { num_output: 10 weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "gaussian" std: 1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "ip2" bottom: "targets" top: "loss" }
}
random_seed: 1701
display: 0
snapshot_after_train: false
base_lr: 0.01 lr_policy: "step" gamma: 0.5 stepsize: 2 momentum: 0.9
`

// TestFusedSGDMatchesSeparate holds the fused GPU update to the separate
// operations (the FusedUpdate setting off, GOCAFFE_FUSED_UPDATE=off) in float32: weights and updates
// after five iterations, with L2 and L1 decay and iter_size 2.
func TestFusedSGDMatchesSeparate(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	for _, extra := range []string{`weight_decay: 0.01`, `weight_decay: 0.02 regularization_type: "L1" iter_size: 2`} {
		run := func(fused settings.Switch) [][]float32 {
			ctx.SetSettings(settings.Settings{FusedUpdate: fused})
			p := &caffepb.SolverParameter{}
			if err := protoio.ParseText([]byte(fusedNet+extra), p); err != nil {
				t.Fatal(err)
			}
			s, err := solver.New[float32](p, solver.Options{Context: ctx})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			data, targets := s.Net().BlobByName("data"), s.Net().BlobByName("targets")
			mathfn.RngGaussian(data.Count(), 0, 1, data.MutableCPUData(), mathfn.NewRNG(1))
			mathfn.RngGaussian(targets.Count(), 0, 1, targets.MutableCPUData(), mathfn.NewRNG(2))
			if err := s.Step(5); err != nil {
				t.Fatal(err)
			}
			var out [][]float32
			for _, b := range s.Net().LearnableParams() {
				out = append(out, append([]float32(nil), b.CPUData()...), append([]float32(nil), b.CPUDiff()...))
			}
			return out
		}
		fused, separate := run(settings.On), run(settings.Off)
		worst := 0.0
		for i := range separate {
			for j, want := range separate[i] {
				d := math.Abs(float64(fused[i][j]) - float64(want))
				worst = max(worst, d/math.Max(1e-3, math.Abs(float64(want))))
			}
		}
		t.Logf("%s: largest relative difference %.3g", extra, worst)
		if worst > 1e-6 {
			t.Errorf("%s: fused update differs from the separate operations by %.3g (relative)", extra, worst)
		}
	}
}
