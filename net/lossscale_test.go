package net_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// lossScaleNet has two losses, one with a loss weight, over a convolution
// and a ReLU, so that a backward pass runs through GEMMs, a nonlinearity,
// a Split and both losses.
const lossScaleNet = `name: "scaled"
layer { name: "data" type: "DummyData" top: "data" top: "label" top: "target"
  dummy_data_param {
    shape { dim: 4 dim: 2 dim: 5 dim: 5 } data_filler { type: "gaussian" std: 1 }
    shape { dim: 4 } data_filler { type: "constant" value: 1 }
    shape { dim: 4 dim: 3 } data_filler { type: "gaussian" std: 1 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 3 kernel_size: 3 weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "softmax" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "xent" }
layer { name: "l2" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "l2" loss_weight: 0.25 }
`

// forwardBackward builds the net (the same weights and data every time),
// sets its loss scale and returns its loss, its parameters' diffs and the
// loss tops' diffs after one forward-backward pass.
func forwardBackward(t *testing.T, scale float64) (float32, [][]float32, []float32) {
	t.Helper()
	n, err := net.New[float32](parseNet(t, lossScaleNet), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, Seed: 1701})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.SetLossScale(scale); err != nil {
		t.Fatal(err)
	}
	loss, err := n.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	var diffs [][]float32
	for _, p := range n.LearnableParams() {
		diffs = append(diffs, slices.Clone(p.CPUDiff()))
	}
	lossDiffs := append(slices.Clone(n.BlobByName("xent").CPUDiff()), n.BlobByName("l2").CPUDiff()...)
	return loss, diffs, lossDiffs
}

// A loss scale multiplies every gradient of a backward pass by itself,
// exactly for a power of two (which commutes with every rounding short of
// overflow), and leaves the loss and the loss tops' diffs (their weights,
// which Forward reads) as they were.
func TestLossScaleMultipliesGradients(t *testing.T) {
	loss1, diffs1, lossDiffs1 := forwardBackward(t, 1)
	if !slices.Equal(lossDiffs1, []float32{1, 0.25}) {
		t.Fatalf("loss diffs %v, want the weights 1 and 0.25", lossDiffs1)
	}
	for _, s := range []float64{1024, 0.125, 3} {
		loss, diffs, lossDiffs := forwardBackward(t, s)
		if loss != loss1 {
			t.Errorf("scale %v: loss %v, unscaled %v", s, loss, loss1)
		}
		if !slices.Equal(lossDiffs, lossDiffs1) {
			t.Errorf("scale %v: the loss tops' diffs are %v after Backward, want the weights %v", s, lossDiffs, lossDiffs1)
		}
		exact := s != 3
		for i, d := range diffs {
			for j, v := range d {
				want := diffs1[i][j] * float32(s)
				if exact && v != want || !exact && math.Abs(float64(v-want)) > 1e-5*math.Abs(float64(want))+1e-30 {
					t.Fatalf("scale %v: param %d diff[%d] = %v, want %v (unscaled %v)", s, i, j, v, want, diffs1[i][j])
				}
			}
		}
	}
}

// A loss scale must be positive, finite, and fit the net's type.
func TestSetLossScaleRefusesBadScales(t *testing.T) {
	n, err := net.New[float32](parseNet(t, lossScaleNet), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 1e39, 1e-50} {
		if err := n.SetLossScale(s); err == nil {
			t.Errorf("loss scale %v accepted", s)
		}
	}
	if n.LossScale() != 1 {
		t.Errorf("LossScale() = %v after refusals, want 1", n.LossScale())
	}
	if scale, adaptive := n.GlobalGradScale(); scale != 1 || adaptive {
		t.Errorf("GlobalGradScale() = %v, %v for a net without the fields", scale, adaptive)
	}
}
