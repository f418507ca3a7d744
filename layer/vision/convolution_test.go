package vision_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	const conv = `type: "Convolution" bottom: "a" bottom: "b" top: "c" top: "d"
	  convolution_param { num_output: 2 kernel_size: 3 stride: 2
	    weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "gaussian" std: 0.5 } }`
	cases.AddGrad(
		layertest.GradCase{Name: "Convolution", Layer: conv, Bottom: [][]int{{2, 3, 6, 4}, {2, 3, 6, 4}}},
		layertest.GradCase{Name: "Convolution/dilated", Bottom: [][]int{{2, 3, 7, 6}},
			Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 2 dilation: 2 pad: 1
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Convolution/1x1", Bottom: [][]int{{2, 3, 4, 3}},
			Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 1
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Convolution/group", Bottom: [][]int{{2, 4, 5, 4}},
			Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 4 group: 2 kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Convolution/3D", Bottom: [][]int{{2, 2, 4, 5, 3}},
			Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 3 kernel_size: 2 kernel_size: 2 stride: 2 pad: 1
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Convolution/forceND", Bottom: [][]int{{1, 2, 5, 5}},
			Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 3 pad: 1 force_nd_im2col: true
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Deconvolution", Bottom: [][]int{{2, 3, 3, 2}},
			Layer: `type: "Deconvolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 3 stride: 2 pad: 1
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
		layertest.GradCase{Name: "Deconvolution/3D", Bottom: [][]int{{1, 2, 2, 3, 2}},
			Layer: `type: "Deconvolution" bottom: "a" top: "c" convolution_param { num_output: 2 kernel_size: 2 stride: 2 group: 2
			  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2 dilation: 2
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{3, 4, 17, 13}}},
		layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 5 kernel_size: 1
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 7, 9, 9}}},
		layertest.Parity{Layer: `type: "Convolution" bottom: "a" top: "c" convolution_param { num_output: 3 kernel_size: 3 stride: 2 pad: 1
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 2, 7, 6, 5}}},
		layertest.Parity{Layer: `type: "Deconvolution" bottom: "a" top: "c" convolution_param { num_output: 4 kernel_size: 4 stride: 2 pad: 1
			weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }`, Bottom: [][]int{{2, 3, 8, 7}}},
	)
}

// naiveConv is the direct definition of an N-D grouped, padded, strided,
// dilated convolution (Caffe's test caffe_conv), for checking the layer.
func naiveConv(x *blob.Blob[float64], w, bias []float64, numOutput, group int, kernel, pad, stride, dilation []int) ([]int, []float64) {
	shape := x.Shape()
	num, channels, in := shape[0], shape[1], shape[2:]
	nsp := len(in)
	out := make([]int, nsp)
	for i := range in {
		out[i] = (in[i]+2*pad[i]-(dilation[i]*(kernel[i]-1)+1))/stride[i] + 1
	}
	outSize, inSize, kSize := prodOf(out), prodOf(in), prodOf(kernel)
	y := make([]float64, num*numOutput*outSize)
	cPerG, oPerG := channels/group, numOutput/group
	data := x.CPUData()
	for n := range num {
		for o := range numOutput {
			g := o / oPerG
			for pos := range outSize {
				op := unravel(pos, out)
				sum := 0.0
				if bias != nil {
					sum = bias[o]
				}
				for c := range cPerG {
					for k := range kSize {
						kp := unravel(k, kernel)
						idx, inside := 0, true
						for a := range nsp {
							p := op[a]*stride[a] - pad[a] + kp[a]*dilation[a]
							inside = inside && p >= 0 && p < in[a]
							idx = idx*in[a] + p
						}
						if inside {
							sum += data[(n*channels+g*cPerG+c)*inSize+idx] * w[(o*cPerG+c)*kSize+k]
						}
					}
				}
				y[(n*numOutput+o)*outSize+pos] = sum
			}
		}
	}
	return append([]int{num, numOutput}, out...), y
}

func prodOf(v []int) int {
	p := 1
	for _, d := range v {
		p *= d
	}
	return p
}

// unravel turns a row-major index into per-axis indices.
func unravel(i int, dims []int) []int {
	idx := make([]int, len(dims))
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = i % dims[a]
		i /= dims[a]
	}
	return idx
}

func TestConvolutionForwardMatchesDefinition(t *testing.T) {
	cases := []struct {
		name                          string
		bottom                        []int
		numOutput, group              int
		kernel, pad, stride, dilation []int
		param                         string
	}{
		{"simple", []int{2, 3, 6, 4}, 4, 1, []int{3, 3}, []int{0, 0}, []int{2, 2}, []int{1, 1}, `kernel_size: 3 stride: 2`},
		{"padded", []int{2, 3, 6, 5}, 3, 1, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, `kernel_size: 3 pad: 1`},
		{"dilated", []int{2, 3, 8, 7}, 2, 1, []int{3, 3}, []int{0, 0}, []int{1, 1}, []int{2, 2}, `kernel_size: 3 dilation: 2`},
		{"1x1", []int{2, 3, 4, 4}, 5, 1, []int{1, 1}, []int{0, 0}, []int{1, 1}, []int{1, 1}, `kernel_size: 1`},
		{"group", []int{2, 6, 6, 4}, 3, 3, []int{3, 2}, []int{1, 0}, []int{2, 1}, []int{1, 1}, `group: 3 kernel_h: 3 kernel_w: 2 pad_h: 1 pad_w: 0 stride_h: 2 stride_w: 1`},
		{"forceND", []int{2, 3, 6, 5}, 3, 1, []int{3, 3}, []int{1, 1}, []int{2, 2}, []int{1, 1}, `kernel_size: 3 pad: 1 stride: 2 force_nd_im2col: true`},
		{"1D", []int{2, 3, 9}, 2, 1, []int{3}, []int{1}, []int{2}, []int{1}, `kernel_size: 3 pad: 1 stride: 2`},
		{"3D", []int{2, 3, 5, 6, 4}, 2, 1, []int{3, 3, 2}, []int{1, 0, 1}, []int{2, 1, 2}, []int{1, 1, 1}, `kernel_size: 3 kernel_size: 3 kernel_size: 2 pad: 1 pad: 0 pad: 1 stride: 2 stride: 1 stride: 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := layertest.New[float64](t, `type: "Convolution" convolution_param { num_output: `+strconv.Itoa(c.numOutput)+` `+c.param+`
			  weight_filler { type: "gaussian" } bias_filler { type: "constant" value: 0.1 } }`)
			x := layertest.Blob[float64](t, c.bottom...)
			layertest.FillGaussian(x, 0, 1, 7)
			y := layertest.Blob[float64](t)
			bottom, top := []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y}
			layertest.SetUp(t, l, bottom, top)
			layertest.Forward(t, l, bottom, top)
			shape, want := naiveConv(x, l.LayerBase().Blobs()[0].CPUData(), l.LayerBase().Blobs()[1].CPUData(), c.numOutput, c.group, c.kernel, c.pad, c.stride, c.dilation)
			if !y.SameShape(mustBlob(t, shape...)) {
				t.Fatalf("top shape %s, want %v", y.ShapeString(), shape)
			}
			layertest.CheckClose(t, "conv top", y.CPUData(), want, 1e-12)
		})
	}
}

func mustBlob(t *testing.T, shape ...int) *blob.Blob[float64] {
	return layertest.Blob[float64](t, shape...)
}

// Deconvolution's forward pass is the adjoint of Convolution's with the
// same weights: <deconv(x), y> == <x, conv(y)> (no bias).
func TestDeconvolutionIsConvolutionTransposed(t *testing.T) {
	const params = `num_output: 3 kernel_size: 3 stride: 2 pad: 1 group: 1 bias_term: false weight_filler { type: "gaussian" }`
	deconv := layertest.New[float64](t, `type: "Deconvolution" convolution_param { `+params+` }`)
	x := layertest.Blob[float64](t, 2, 4, 5, 4)
	layertest.FillGaussian(x, 0, 1, 3)
	dy := layertest.Blob[float64](t)
	layertest.SetUp(t, deconv, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{dy})
	layertest.Forward(t, deconv, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{dy})
	if got := dy.ShapeString(); got != "2 3 9 7 (378)" {
		t.Fatalf("deconvolution top %s, want 2 3 9 7: stride*(in-1) + kernel - 2*pad", got)
	}
	// A convolution from 3 to 4 channels with the deconvolution's weights.
	conv := layertest.New[float64](t, `type: "Convolution" convolution_param { num_output: 4 kernel_size: 3 stride: 2 pad: 1 bias_term: false }`)
	y := layertest.Blob[float64](t, 2, 3, 9, 7)
	layertest.FillGaussian(y, 0, 1, 4)
	cy := layertest.Blob[float64](t)
	layertest.SetUp(t, conv, []*blob.Blob[float64]{y}, []*blob.Blob[float64]{cy})
	if err := conv.LayerBase().Blobs()[0].CopyFrom(deconv.LayerBase().Blobs()[0], false, false); err != nil {
		t.Fatal(err)
	}
	layertest.Forward(t, conv, []*blob.Blob[float64]{y}, []*blob.Blob[float64]{cy})
	lhs, rhs := layertest.Dot(dy.CPUData(), y.CPUData()), layertest.Dot(x.CPUData(), cy.CPUData())
	if d := lhs - rhs; d > 1e-9 || d < -1e-9 {
		t.Errorf("<deconv x, y> = %v, <x, conv y> = %v", lhs, rhs)
	}
}

func TestConvolutionErrors(t *testing.T) {
	cases := []struct {
		param  string
		bottom []int
		want   string
	}{
		{`num_output: 2 kernel_size: 7`, []int{1, 3, 5, 5}, "does not fit the input of 5 with pad 0"},
		{`num_output: 2 kernel_size: 3 group: 2`, []int{1, 3, 5, 5}, "group 2 must divide the 3 input channels"},
		{`num_output: 3 kernel_size: 3 group: 2`, []int{1, 4, 5, 5}, "multiple of group"},
		{`num_output: 2 kernel_size: 3 kernel_h: 3 kernel_w: 3`, []int{1, 3, 5, 5}, "either kernel_size or kernel_h/w"},
		{`num_output: 2`, []int{1, 3, 5, 5}, "kernel_size must be specified"},
		{`num_output: 2 kernel_size: 3 kernel_size: 3 kernel_size: 3`, []int{1, 3, 5, 5}, "specified 3 times; 2 spatial dims"},
		{`kernel_size: 3`, []int{1, 3, 5, 5}, "num_output must be set"},
		{`num_output: 2 kernel_size: 3 stride: 0`, []int{1, 3, 5, 5}, "stride dimensions must be nonzero"},
		{`num_output: 2 kernel_h: 3 kernel_w: 3`, []int{1, 3, 5, 5, 5}, "can only be used for 2D convolution"},
	}
	for _, c := range cases {
		l, err := layer.New[float32](layertest.Param(t, `name: "conv9" type: "Convolution" convolution_param { `+c.param+` }`))
		if err == nil {
			err = layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, c.bottom...)}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "conv9") {
			t.Errorf("%s on %v: err = %v, want one naming conv9 and containing %q", c.param, c.bottom, err, c.want)
		}
	}
}

func TestConvolutionWeightsFromModelAreChecked(t *testing.T) {
	p := layertest.Param(t, `name: "c" type: "Convolution" convolution_param { num_output: 2 kernel_size: 3 }
	  blobs { shape { dim: 2 dim: 3 dim: 3 dim: 3 } } blobs { shape { dim: 3 } }`)
	for _, b := range p.Blobs {
		n := 1
		for _, d := range b.GetShape().GetDim() {
			n *= int(d)
		}
		b.Data = make([]float32, n)
	}
	l, err := layer.New[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	err = layer.SetUp(l, []*blob.Blob[float32]{layertest.Blob[float32](t, 1, 3, 5, 5)}, []*blob.Blob[float32]{layertest.Blob[float32](t)})
	if err == nil || !strings.Contains(err.Error(), "incorrect bias shape: expected [2]") {
		t.Errorf("err = %v", err)
	}
}
