package vision_test

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// BenchmarkConvTrain times the host's training passes, forward and
// backward apart, of the convolutions of the training nets that
// tools/cputrain compares with PyTorch, at its batches:
//
//	GOMAXPROCS=2 go test ./layer/vision/ -run X -bench ConvTrain
func BenchmarkConvTrain(b *testing.B) {
	for _, s := range []struct {
		name  string
		param string
		shape []int
		down  bool // the bottom gradient wanted
	}{
		{"cifar_conv1", "num_output: 32 pad: 2 kernel_size: 5", []int{100, 3, 32, 32}, false},
		{"cifar_conv2", "num_output: 32 pad: 2 kernel_size: 5", []int{100, 32, 16, 16}, true},
		{"cifar_conv3", "num_output: 64 pad: 2 kernel_size: 5", []int{100, 32, 8, 8}, true},
		{"resnet_res2_1x1_64_256", "num_output: 256 kernel_size: 1 bias_term: false", []int{8, 64, 56, 56}, true},
		{"resnet_res2_1x1_256_64", "num_output: 64 kernel_size: 1 bias_term: false", []int{8, 256, 56, 56}, true},
		{"resnet_res3_1x1_128_512", "num_output: 512 kernel_size: 1 bias_term: false", []int{8, 128, 28, 28}, true},
		{"resnet_res4_1x1_1024_256", "num_output: 256 kernel_size: 1 bias_term: false", []int{8, 1024, 14, 14}, true},
		{"resnet_res5_1x1_512_2048", "num_output: 2048 kernel_size: 1 bias_term: false", []int{8, 512, 7, 7}, true},
		{"resnet_res2_3x3_64", "num_output: 64 kernel_size: 3 pad: 1 bias_term: false", []int{8, 64, 56, 56}, true},
		{"resnet_res3_3x3_128", "num_output: 128 kernel_size: 3 pad: 1 bias_term: false", []int{8, 128, 28, 28}, true},
		{"resnet_res4_3x3_256", "num_output: 256 kernel_size: 3 pad: 1 bias_term: false", []int{8, 256, 14, 14}, true},
		{"resnet_res5_3x3_512", "num_output: 512 kernel_size: 3 pad: 1 bias_term: false", []int{8, 512, 7, 7}, true},
		{"googlenet_3a_5x5", "num_output: 32 kernel_size: 5 pad: 2", []int{8, 16, 28, 28}, true},
		{"googlenet_4a_3x3", "num_output: 208 kernel_size: 3 pad: 1", []int{8, 96, 14, 14}, true},
	} {
		p := `type: "Convolution" convolution_param { ` + s.param + ` weight_filler { type: "gaussian" std: 0.1 } }`
		l := layertest.New[float32](b, p)
		x, y := layertest.Blob[float32](b, s.shape...), layertest.Blob[float32](b)
		layertest.FillGaussian(x, 0, 1, 1)
		bottom, top := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y}
		layertest.SetUp(b, l, bottom, top)
		layertest.Forward(b, l, bottom, top)
		layertest.FillGaussian(y, 0, 1, 2)
		copy(y.MutableCPUDiff(), y.CPUData())
		b.Run(fmt.Sprintf("%s/forward", s.name), func(b *testing.B) {
			for b.Loop() {
				if err := l.ForwardCPU(bottom, top); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%s/backward", s.name), func(b *testing.B) {
			for b.Loop() {
				if err := l.BackwardCPU(top, []bool{s.down}, bottom); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
