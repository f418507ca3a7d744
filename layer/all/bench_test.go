package all_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// benchLayers are the layers whose speed the layers issue asks for.
var benchLayers = []struct {
	name   string
	layer  string
	bottom []int
}{
	{"lenet_conv2", `type: "Convolution" convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } }`, []int{64, 20, 12, 12}},
	{"caffenet_conv2", `type: "Convolution" convolution_param { num_output: 256 kernel_size: 5 pad: 2 group: 2 weight_filler { type: "gaussian" std: 0.01 } }`, []int{256, 96, 27, 27}},
	{"caffenet_fc6", `type: "InnerProduct" inner_product_param { num_output: 4096 weight_filler { type: "gaussian" std: 0.005 } }`, []int{256, 9216}},
	// The shapes of ../shared/caffe's side-by-side nets (batch 10 and 100).
	{"caffenet_conv1_b10", `type: "Convolution" convolution_param { num_output: 96 kernel_size: 11 stride: 4 weight_filler { type: "gaussian" std: 0.01 } }`, []int{10, 3, 227, 227}},
	{"caffenet_fc6_b10", `type: "InnerProduct" inner_product_param { num_output: 4096 weight_filler { type: "gaussian" std: 0.005 } }`, []int{10, 9216}},
	{"cifar10_conv2_b100", `type: "Convolution" convolution_param { num_output: 32 kernel_size: 5 pad: 2 weight_filler { type: "gaussian" std: 0.01 } }`, []int{100, 32, 16, 16}},
	{"lenet_pool1_b64", `type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 }`, []int{64, 20, 24, 24}},
	{"cifar10_pool1_b100", `type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 2 }`, []int{100, 32, 32, 32}},
	{"caffenet_drop6_b256", `type: "Dropout"`, []int{256, 4096}},
	{"cifar10_relu1_b100", `type: "ReLU"`, []int{100, 32, 16, 16}},
	{"cifar10_pool2_b100", `type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 }`, []int{100, 32, 16, 16}},
}

// setUpBench builds a layer on its bottom; prepare may put it on a device.
func setUpBench(b *testing.B, text string, shape []int, prepare func(layer.Layer[float32], []*blob.Blob[float32])) (layer.Layer[float32], []*blob.Blob[float32], []*blob.Blob[float32]) {
	l := layertest.New[float32](b, text)
	x := layertest.Blob[float32](b, shape...)
	layertest.FillUniform(x, -1, 1, 1)
	y := layertest.Blob[float32](b)
	if prepare != nil {
		prepare(l, []*blob.Blob[float32]{x, y})
	}
	bottom, top := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y}
	layertest.SetUp(b, l, bottom, top)
	layertest.FillUniform(y, -1, 1, 2) // stands in for the diff from above: copied to the diff below
	copy(y.MutableCPUDiff(), y.CPUData())
	return l, bottom, top
}

// benchForwardBackward times the layer's forward and its backward (to the
// bottom and the parameters) separately; sync waits for the device.
func benchForwardBackward(b *testing.B, prepare func(layer.Layer[float32], []*blob.Blob[float32]), sync func()) {
	for _, c := range benchLayers {
		l, bottom, top := setUpBench(b, c.layer, c.bottom, prepare)
		b.Run(c.name+"/forward", func(b *testing.B) {
			for b.Loop() {
				if _, err := layer.Forward(l, bottom, top); err != nil {
					b.Fatal(err)
				}
				sync()
			}
		})
		b.Run(c.name+"/backward", func(b *testing.B) {
			for b.Loop() {
				if err := layer.Backward(l, top, []bool{true}, bottom); err != nil {
					b.Fatal(err)
				}
				sync()
			}
		})
	}
}

// BenchmarkLayers runs on the CPU (pure Go BLAS by default, OpenBLAS with
// -tags openblas). CaffeNet's layers take seconds per pass here: run with
// -benchtime=1x.
func BenchmarkLayers(b *testing.B) { benchForwardBackward(b, nil, func() {}) }
