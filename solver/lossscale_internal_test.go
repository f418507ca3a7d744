package solver

import (
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// NVCaffe's adaptive scaling, on gradients marked as reduced precision
// (which gocaffe does not store yet): the next iteration's scale is
// K·4/m, m the largest unscaled gradient after the iter_size
// normalisation; with no marked gradient, or all zero, it stays K.
func TestAdaptiveLossScale(t *testing.T) {
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(`
net_param {
  name: "adaptive" global_grad_scale: 8 global_grad_scale_adaptive: true
  layer { name: "data" type: "Input" top: "data" top: "targets"
    input_param { shape { dim: 8 dim: 3 } shape { dim: 8 dim: 1 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
    inner_product_param { num_output: 1 weight_filler { type: "gaussian" std: 1 } bias_filler { type: "gaussian" std: 1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "targets" top: "loss" }
}
base_lr: 0.01 lr_policy: "fixed" iter_size: 2 random_seed: 1701 snapshot_after_train: false`), p); err != nil {
		t.Fatal(err)
	}
	s, err := New[float32](p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := s.Net().BlobByName("data")
	mathfn.RngGaussian(data.Count(), 0, 1, data.MutableCPUData(), mathfn.NewRNG(1))
	if s.LossScale() != 8 {
		t.Fatalf("first scale %v, want K = 8", s.LossScale())
	}
	// FP32 gradients only: K throughout, as in NVCaffe.
	if err := s.Step(2); err != nil {
		t.Fatal(err)
	}
	if s.LossScale() != 8 {
		t.Errorf("scale %v with FP32 gradients, want K = 8", s.LossScale())
	}
	s.lossScale.reduced = []bool{true, false} // the weights only
	var want float64
	s.OnGradientsReady(func(s *Solver[float32]) error {
		var m float64
		for _, g := range s.Net().LearnableParams()[0].CPUDiff() {
			m = max(m, math.Abs(float64(g)))
		}
		m /= s.LossScale() * 2 // unscaled, normalised over iter_size
		want = 8 * 4 / m
		return nil
	})
	for range 3 {
		if err := s.Step(1); err != nil {
			t.Fatal(err)
		}
		if got := s.LossScale(); math.Abs(got-want) > 1e-6*want {
			t.Errorf("scale %v, want K·4/max|g| = %v", got, want)
		}
	}
}
