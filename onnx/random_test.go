package onnx

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/gocaffe/gocaffe/internal/randnet"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// onnxGenerators are the random-net generators whose nets the exporter
// is meant to take: a layer under test on real-valued inputs (not labels
// or indices, not a database).
var onnxGenerators = []string{"convolution", "deconvolution", "pooling", "lrn", "concat", "slice", "crop", "reshape",
	"reduction", "eltwise", "scale", "bias", "innerproduct", "softmax", "tile", "flatten", "neuron", "mvn",
	"batchnorm", "spp", "elementwise", "argmax", "chain"}

// TestRandomNets exports nets drawn at random by internal/randnet (the
// nets that hold gocaffe to Caffe in tools/golden: pads against strides,
// dilations, groups, negative axes, chains of in-place layers, ...) as
// deploy nets and runs them in ONNX Runtime against gocaffe's forward
// pass. A net the exporter refuses as unsupported is skipped; any other
// error or difference fails. GOCAFFE_ONNX_RANDOM sets how many seeds are
// drawn (default 60, each a net of one of the generators above or none).
func TestRandomNets(t *testing.T) {
	count := 60
	if s := os.Getenv("GOCAFFE_ONNX_RANDOM"); s != "" {
		var err error
		if count, err = strconv.Atoi(s); err != nil {
			t.Fatalf("GOCAFFE_ONNX_RANDOM=%q: want an integer", s)
		}
	}
	unsupported := 0
	for seed := 1; seed <= count; seed++ {
		g, n, ok := randnet.DrawDeploy(uint64(seed), 0x0e1, onnxGenerators)
		if !ok {
			continue
		}
		text := n.DeployText()
		t.Run(fmt.Sprintf("%d_%s", seed, g.Name), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the net:\n%s", text)
				}
			})
			if err := exportable(parseNet(t, text)); err != nil {
				unsupported++
				t.Skip(err)
			}
			if n, err := net.New[float32](parseNet(t, text), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}}); err != nil {
				t.Skipf("gocaffe refuses the net, as Caffe does: %v", err)
			} else {
				n.Close()
			}
			exportAndCompare(t, parseNet(t, text), 0, Options{})
		})
	}
	t.Logf("%d nets the exporter does not support", unsupported)
}

// exportable reports the exporter's UnsupportedError for the net, if any.
func exportable(p *caffepb.NetParameter) error {
	_, err := Export(p, nil, Options{})
	if ue := (*UnsupportedError)(nil); errors.As(err, &ue) {
		return err
	}
	return nil
}

// TestInPlaceOnInput: a layer in place on an input blob (a deploy net that
// scales its data in place, say) keeps the graph input named as the blob,
// and the model is valid and computes the net's outputs. The input was
// once declared under the blob's final value, which the layer's output
// took, leaving the first node reading a value nothing made (found by
// TestRandomNets).
func TestInPlaceOnInput(t *testing.T) {
	p := parseNet(t, `name: "scaled"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 5 dim: 4 } } }
layer { name: "mean" type: "Power" bottom: "data" top: "data" power_param { shift: -0.5 scale: 2 } }
layer { name: "relu" type: "ReLU" bottom: "data" top: "data" }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 2 kernel_size: 3 } }`)
	m := exportAndCompare(t, p, 0, Options{})
	if !slices.Equal(m.Inputs, []string{"data"}) {
		t.Errorf("inputs %v, want [data]", m.Inputs)
	}
}
