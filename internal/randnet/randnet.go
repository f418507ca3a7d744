// Package randnet draws small Caffe nets at random, each around one
// layer type under test (its parameters and input shapes drawn from the
// space Caffe accepts) or a chain of common layers, for the tests that
// hold gocaffe to BVLC Caffe (tools/golden) and its ONNX export to ONNX
// Runtime (onnx). Every output of the layer under test feeds a probe, an
// InnerProduct to one value with loss weight 1, so that its gradient is a
// random vector (tools/golden/README.md).
package randnet

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Generator draws nets around one layer type (or of a kind: "chain").
type Generator struct {
	Name string
	Draw func(r *rand.Rand, n *Net)
}

// Net draws a net with the generator; dbs are the databases the data
// generator reads (nil for the others).
func (g Generator) Net(r *rand.Rand, dbs *DBs) *Net {
	n := &Net{dbs: dbs}
	g.Draw(r, n)
	return n
}

// Net is a net of Input blobs, the layer under test and a probe on each
// of its outputs (tools/golden/README.md).
type Net struct {
	dbs *DBs // the databases the data generator reads
	// NoForceBackward: Caffe cannot take force_backward (Embed, data
	// layers, layers without a gradient).
	NoForceBackward bool
	// Flags are golden_dump's flags: how to fill the inputs and
	// parameters, the phase.
	Flags    []string
	positive bool     // x takes positive values only (Log, Power)
	inputs   []string // names
	shapes   [][]int
	layers   []string
	probes   []string
}

func (n *Net) input(name string, shape []int) {
	n.inputs, n.shapes = append(n.inputs, name), append(n.shapes, shape)
}

// layer adds a layer of type typ from bottoms to tops with the parameter
// text param; tops are probed, but for "loss" (the loss itself) and
// "out_..." (compared as outputs only).
func (n *Net) layer(typ string, bottoms, tops []string, param string) {
	n.named("under_test", typ, bottoms, tops, param, true)
}

// named adds a layer of its own name; probe says whether its tops are
// probed (as by layer) or left to the layers after it.
func (n *Net) named(name, typ string, bottoms, tops []string, param string, probe bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "layer {\n  name: %q\n  type: %q\n", name, typ)
	for _, x := range bottoms {
		fmt.Fprintf(&b, "  bottom: %q\n", x)
	}
	for _, x := range tops {
		fmt.Fprintf(&b, "  top: %q\n", x)
		switch {
		case x == "loss":
			b.WriteString("  loss_weight: 1\n")
		case strings.HasPrefix(x, "out_") || !probe: // an output compared as it is
		default:
			n.probes = append(n.probes, x)
		}
	}
	if param != "" {
		fmt.Fprintf(&b, "  %s\n", param)
	}
	b.WriteString("}\n")
	n.layers = append(n.layers, b.String())
}

// Text is the net's prototxt, with golden_dump's flags in its first line.
func (n *Net) Text() string {
	var b strings.Builder
	if len(n.Flags) > 0 {
		fmt.Fprintf(&b, "# golden: %s\n", strings.Join(n.Flags, " "))
	}
	b.WriteString("name: \"random\"\n")
	if !n.NoForceBackward {
		b.WriteString("force_backward: true\n")
	}
	n.writeLayers(&b)
	for _, p := range n.probes {
		fmt.Fprintf(&b, `layer {
  name: "probe_%s"
  type: "InnerProduct"
  bottom: %q
  top: "probe_%s"
  loss_weight: 1
  inner_product_param { num_output: 1 axis: 0 weight_filler { type: "gaussian" std: 1 } bias_filler { type: "constant" value: 0.5 } }
}
`, p, p, p)
	}
	return b.String()
}

// writeLayers writes the Input layer and the layers under test.
func (n *Net) writeLayers(b *strings.Builder) {
	if len(n.inputs) > 0 {
		b.WriteString("layer {\n  name: \"input\"\n  type: \"Input\"\n")
		for _, x := range n.inputs {
			fmt.Fprintf(b, "  top: %q\n", x)
		}
		b.WriteString("  input_param {")
		for _, s := range n.shapes {
			b.WriteString(" shape {")
			for _, d := range s {
				fmt.Fprintf(b, " dim: %d", d)
			}
			b.WriteString(" }")
		}
		b.WriteString(" }\n}\n")
	}
	for _, l := range n.layers {
		b.WriteString(l)
	}
}

// positiveInput has golden_dump fill x with positive values, which Log
// and Power of fractional powers need, and marks the net so.
func (n *Net) positiveInput() {
	n.Flags = append(n.Flags, "--fill x=uniform:0.2:3")
	n.positive = true
}

// DrawDeploy draws the net of a seed for a deploy test: a generator
// among all, by the seed and stream, and its net, if the generator is one
// of names and its inputs may take any real values (not the positive ones
// Log and Power are drawn with); ok is false otherwise. The net's
// DeployText is then a TEST net whose inputs a test fills as it likes.
func DrawDeploy(seed, stream uint64, names []string) (g Generator, n *Net, ok bool) {
	r := rand.New(rand.NewPCG(seed, stream))
	g = Generators[r.IntN(len(Generators))]
	if !slices.Contains(names, g.Name) {
		return g, nil, false
	}
	n = g.Net(r, nil)
	return g, n, !n.positive
}

// DeployText is the net without its probes, losses' weights aside, as a
// deploy net: no golden_dump flags, no force_backward.
func (n *Net) DeployText() string {
	var b strings.Builder
	b.WriteString("name: \"random\"\n")
	n.writeLayers(&b)
	return b.String()
}

// Between draws an integer in [lo, hi].
func Between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// Pick draws one of vs.
func Pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// spatialParams writes a convolution's or pooling's per-axis field
// (field_h/field_w and repeated, whose name is field, or kernel_size): the
// one value for all axes, a value per axis, the _h/_w form on 2-D images
// where hw says Caffe takes it, or nothing when every value is def.
// Pooling's fields are not repeated: pool says so, and values that differ
// take the _h/_w form.
func spatialParams(r *rand.Rand, field string, vs []int, def int, hw bool) string {
	return axisFields(r, field, vs, def, hw, false)
}

func poolParams(r *rand.Rand, field string, vs []int, def int) string {
	return axisFields(r, field, vs, def, true, true)
}

func axisFields(r *rand.Rand, field string, vs []int, def int, hw, pool bool) string {
	repeated := field
	if field == "kernel" {
		repeated = "kernel_size"
	}
	same := true
	for _, v := range vs {
		same = same && v == vs[0]
	}
	switch {
	case same && vs[0] == def && r.IntN(2) == 0:
		return ""
	case hw && len(vs) == 2 && (r.IntN(2) == 0 || pool && !same):
		return fmt.Sprintf(" %s_h: %d %s_w: %d", field, vs[0], field, vs[1])
	case same && (pool || r.IntN(3) > 0):
		return fmt.Sprintf(" %s: %d", repeated, vs[0])
	}
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, " %s: %d", repeated, v)
	}
	return b.String()
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return -(-a / b)
	}
	return (a + b - 1) / b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var fillers = []string{
	`weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "uniform" min: -1 max: 1 }`,
	`weight_filler { type: "xavier" } bias_filler { type: "gaussian" std: 0.3 }`,
}

// convolution draws a convolution or deconvolution: groups, pads,
// strides, dilations on 1 to 3 spatial axes.
func convolution(typ string) func(r *rand.Rand, n *Net) {
	return func(r *rand.Rand, n *Net) {
		spatial := Pick(r, 1, 2, 2, 2, 3)
		group := Pick(r, 1, 1, 2, 3)
		channels, outputs := group*Between(r, 1, 3), group*Between(r, 1, 3)
		if r.IntN(5) == 0 { // depthwise
			channels, outputs, group = 4, 4, 4
		}
		shape := []int{Between(r, 1, 2), channels}
		kernel, stride, pad, dil := make([]int, spatial), make([]int, spatial), make([]int, spatial), make([]int, spatial)
		for i := range spatial {
			kernel[i], stride[i], pad[i], dil[i] = Between(r, 1, 4), Pick(r, 1, 1, 2, 3), Between(r, 0, 2), Pick(r, 1, 1, 2)
			if spatial == 3 {
				kernel[i] = Between(r, 1, 2)
			}
			extent := dil[i]*(kernel[i]-1) + 1
			lo := max(1, extent-2*pad[i])
			if typ == "Deconvolution" { // stride*(in-1) + extent - 2*pad >= 1
				lo = max(1, ceilDiv(1-extent+2*pad[i], stride[i])+1)
			}
			hi := lo + 5
			if spatial == 3 {
				hi = lo + 1
			}
			shape = append(shape, Between(r, lo, hi))
		}
		n.input("x", shape)
		hw := spatial == 2
		p := fmt.Sprintf("convolution_param { num_output: %d%s%s%s%s", outputs,
			spatialParams(r, "kernel", kernel, -1, hw), spatialParams(r, "stride", stride, 1, hw),
			spatialParams(r, "pad", pad, 0, hw), spatialParams(r, "dilation", dil, 1, false))
		if group > 1 || r.IntN(4) == 0 {
			p += fmt.Sprintf(" group: %d", group)
		}
		if r.IntN(4) == 0 {
			p += " bias_term: false"
		}
		p += " " + Pick(r, fillers...) + " }"
		n.layer(typ, []string{"x"}, []string{"y"}, p)
	}
}

func pooling(r *rand.Rand, n *Net) {
	shape := []int{Between(r, 1, 2), Between(r, 1, 3), Between(r, 1, 9), Between(r, 1, 9)}
	method := Pick(r, "MAX", "AVE")
	p := "pooling_param { pool: " + method
	if r.IntN(6) == 0 {
		p += " global_pooling: true"
	} else {
		kernel := []int{Between(r, 1, min(4, shape[2]+2)), Between(r, 1, min(4, shape[3]+2))}
		stride := []int{Pick(r, 1, 2, 2, 3), Pick(r, 1, 2, 2, 3)}
		pad := []int{Between(r, 0, kernel[0]-1), Between(r, 0, kernel[1]-1)}
		ceil := true
		if r.IntN(3) == 0 {
			ceil = r.IntN(2) == 0
			p += " round_mode: " + map[bool]string{true: "CEIL", false: "FLOOR"}[ceil]
		}
		for i := range 2 {
			shape[2+i] = max(shape[2+i], kernel[i]-2*pad[i])
			// Without padding, rounding up can leave a last window that
			// starts past the image: Caffe divides by zero there (AVE)
			// or writes its gradient before the plane (MAX, on the CPU).
			for pad[0]+pad[1] == 0 && ceil && ceilDiv(shape[2+i]-kernel[i], stride[i])*stride[i] >= shape[2+i] {
				shape[2+i]++
			}
		}
		p = "pooling_param { pool: " + method + poolParams(r, "kernel", kernel, -1) + poolParams(r, "stride", stride, 1) +
			poolParams(r, "pad", pad, 0) + strings.TrimPrefix(p, "pooling_param { pool: "+method)
	}
	n.input("x", shape)
	tops := []string{"y"}
	if method == "MAX" && r.IntN(3) == 0 {
		tops = append(tops, "mask")
	}
	n.layer("Pooling", []string{"x"}, tops, p+" }")
}

func lrn(r *rand.Rand, n *Net) {
	n.input("x", []int{Between(r, 1, 2), Between(r, 1, 7), Between(r, 1, 6), Between(r, 1, 6)})
	n.Flags = append(n.Flags, "--fill x=uniform:-2:2")
	p := fmt.Sprintf("lrn_param { local_size: %d alpha: %g beta: %g k: %g norm_region: %s }",
		Pick(r, 1, 3, 5, 7), Pick(r, 1e-4, 0.1, 1.5), Pick(r, 0.75, 0.5, 1.2), Pick(r, 1.0, 2.0, 0.5),
		Pick(r, "ACROSS_CHANNELS", "WITHIN_CHANNEL"))
	n.layer("LRN", []string{"x"}, []string{"y"}, p)
}

// dims draws k axes of 1 to 4.
func dims(r *rand.Rand, k int) []int {
	d := make([]int, k)
	for i := range d {
		d[i] = Between(r, 1, 4)
	}
	return d
}

// randomShape draws a shape of 1 to 4 axes of 1 to 4.
func randomShape(r *rand.Rand) []int {
	s := make([]int, Between(r, 1, 4))
	for i := range s {
		s[i] = Between(r, 1, 4)
	}
	return s
}

// axisText writes axis a of a num-axes shape, as given or counted from
// the end.
func axisText(r *rand.Rand, a, num int) int {
	if r.IntN(3) == 0 {
		return a - num
	}
	return a
}

func concat(r *rand.Rand, n *Net) {
	s := randomShape(r)
	axis := r.IntN(len(s))
	bottoms := []string{}
	for i := range Between(r, 1, 3) {
		b := append([]int(nil), s...)
		b[axis] = Between(r, 1, 3)
		name := fmt.Sprintf("x%d", i)
		n.input(name, b)
		bottoms = append(bottoms, name)
	}
	n.layer("Concat", bottoms, []string{"y"}, fmt.Sprintf("concat_param { axis: %d }", axisText(r, axis, len(s))))
}

func slice(r *rand.Rand, n *Net) {
	s := randomShape(r)
	axis := r.IntN(len(s))
	s[axis] = Between(r, 2, 6)
	n.input("x", s)
	tops := []string{"y0"}
	p := fmt.Sprintf("slice_param { axis: %d", axisText(r, axis, len(s)))
	if r.IntN(2) == 0 {
		for at := 1; at < s[axis] && r.IntN(2) == 0; at += Between(r, 1, 2) {
			p += fmt.Sprintf(" slice_point: %d", at)
			tops = append(tops, fmt.Sprintf("y%d", len(tops)))
		}
	} else {
		for _, d := range []int{2, 3} {
			if s[axis]%d == 0 && r.IntN(2) == 0 {
				tops = []string{"y0"}
				for range d - 1 {
					tops = append(tops, fmt.Sprintf("y%d", len(tops)))
				}
				break
			}
		}
	}
	n.layer("Slice", []string{"x"}, tops, p+" }")
}

func crop(r *rand.Rand, n *Net) {
	s := randomShape(r)
	for len(s) < 2 {
		s = append(s, Between(r, 1, 4))
	}
	axis := r.IntN(len(s))
	ref := append([]int(nil), s...)
	p := fmt.Sprintf("crop_param { axis: %d", axisText(r, axis, len(s)))
	offsets := r.IntN(3) // none, one for all, one per axis
	for i := axis; i < len(s); i++ {
		s[i] += Between(r, 0, 3)
	}
	for i := axis; i < len(s); i++ {
		if offsets == 2 || offsets == 1 && i == axis {
			limit := s[i] - ref[i]
			if offsets == 1 {
				for j := axis; j < len(s); j++ {
					limit = min(limit, s[j]-ref[j])
				}
			}
			p += fmt.Sprintf(" offset: %d", Between(r, 0, limit))
		}
	}
	n.input("x", s)
	n.input("ref", ref)
	n.layer("Crop", []string{"x", "ref"}, []string{"y"}, p+" }")
}

func reshape(r *rand.Rand, n *Net) {
	s := []int{Between(r, 1, 3), Between(r, 1, 4), Between(r, 1, 4)}
	n.input("x", s)
	// Reshape the whole blob to [-1, d] or keep the first axis (0).
	total := s[0] * s[1] * s[2]
	var p string
	switch r.IntN(3) {
	case 0:
		p = fmt.Sprintf("reshape_param { shape { dim: 0 dim: -1 } }")
	case 1:
		p = fmt.Sprintf("reshape_param { shape { dim: -1 dim: %d } }", Pick(r, 1, total))
	default:
		p = fmt.Sprintf("reshape_param { shape { dim: %d dim: 1 } axis: 1 num_axes: 1 }", s[1])
	}
	n.layer("Reshape", []string{"x"}, []string{"y"}, p)
}

func reduction(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	axis := r.IntN(len(s))
	top := "y"
	if axis == 0 { // a 0-D top, which a probe cannot take: the loss itself
		top = "loss"
	}
	n.layer("Reduction", []string{"x"}, []string{top}, fmt.Sprintf("reduction_param { operation: %s axis: %d coeff: %g }",
		Pick(r, "SUM", "ASUM", "SUMSQ", "MEAN"), axisText(r, axis, len(s)), Pick(r, 1.0, -0.5, 2.0)))
}

func eltwise(r *rand.Rand, n *Net) {
	s := randomShape(r)
	bottoms := []string{}
	for i := range Between(r, 2, 3) {
		name := fmt.Sprintf("x%d", i)
		n.input(name, s)
		bottoms = append(bottoms, name)
	}
	op := Pick(r, "PROD", "SUM", "MAX")
	p := "eltwise_param { operation: " + op
	if op == "SUM" && r.IntN(2) == 0 {
		for range bottoms {
			p += fmt.Sprintf(" coeff: %g", Pick(r, 1.0, -1.0, 0.5, 2.0))
		}
	}
	if op == "PROD" && r.IntN(2) == 0 {
		p += " stable_prod_grad: false"
	}
	n.layer("Eltwise", bottoms, []string{"y"}, p+" }")
}

// scaleOrBias draws Scale or Bias, its factor a second bottom or its own
// parameter, over axes [axis, axis+num_axes).
func scaleOrBias(typ string) func(r *rand.Rand, n *Net) {
	return func(r *rand.Rand, n *Net) {
		s := randomShape(r)
		axis := r.IntN(len(s))
		numAxes := Between(r, 0, len(s)-axis)
		n.input("x", s)
		field := map[string]string{"Scale": "scale_param", "Bias": "bias_param"}[typ]
		if r.IntN(2) == 0 { // the factor a bottom of one axis or more
			numAxes = max(numAxes, 1)
			n.input("f", append([]int(nil), s[axis:axis+numAxes]...))
			n.layer(typ, []string{"x", "f"}, []string{"y"}, fmt.Sprintf("%s { axis: %d }", field, axisText(r, axis, len(s))))
			return
		}
		p := fmt.Sprintf("%s { axis: %d num_axes: %d filler { type: \"uniform\" min: -2 max: 2 }", field, axis, numAxes)
		if typ == "Scale" && r.IntN(2) == 0 {
			p += " bias_term: true bias_filler { type: \"gaussian\" std: 1 }"
		}
		n.layer(typ, []string{"x"}, []string{"y"}, p+" }")
	}
}

func innerProduct(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	p := fmt.Sprintf("inner_product_param { num_output: %d axis: %d", Between(r, 1, 4), axisText(r, r.IntN(len(s)), len(s)))
	if r.IntN(2) == 0 {
		p += " transpose: true"
	}
	if r.IntN(4) == 0 {
		p += " bias_term: false"
	}
	n.layer("InnerProduct", []string{"x"}, []string{"y"}, p+" "+Pick(r, fillers...)+" }")
}

func softmax(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	n.Flags = append(n.Flags, "--fill x=uniform:-4:4")
	n.layer("Softmax", []string{"x"}, []string{"y"}, fmt.Sprintf("softmax_param { axis: %d }", axisText(r, r.IntN(len(s)), len(s))))
}

// softmaxLoss draws SoftmaxWithLoss over any axis, with an ignored label
// and each normalisation.
func softmaxLoss(r *rand.Rand, n *Net) {
	s := randomShape(r)
	for len(s) < 2 {
		s = append(s, 2)
	}
	axis := Between(r, 1, len(s)-1) // Caffe's loss layers hold the first axis to the label's
	s[axis] = Between(r, 2, 5)
	label := append(append([]int(nil), s[:axis]...), s[axis+1:]...)
	n.input("x", s)
	n.input("label", label)
	n.Flags = append(n.Flags, "--fill x=uniform:-3:3", fmt.Sprintf("--fill label=int:0:%d", s[axis]-1))
	p := fmt.Sprintf("softmax_param { axis: %d }", axisText(r, axis, len(s)))
	var lp []string
	if r.IntN(2) == 0 {
		lp = append(lp, fmt.Sprintf("ignore_label: %d", r.IntN(s[axis])))
	}
	if r.IntN(2) == 0 {
		lp = append(lp, "normalization: "+Pick(r, "FULL", "VALID", "BATCH_SIZE", "NONE"))
	}
	if len(lp) > 0 {
		p += " loss_param { " + strings.Join(lp, " ") + " }"
	}
	n.layer("SoftmaxWithLoss", []string{"x", "label"}, []string{"loss"}, p)
}

func tile(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	n.layer("Tile", []string{"x"}, []string{"y"}, fmt.Sprintf("tile_param { axis: %d tiles: %d }", axisText(r, r.IntN(len(s)), len(s)), Between(r, 1, 3)))
}

func flatten(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	a := r.IntN(len(s))
	e := Between(r, a, len(s)-1)
	n.layer("Flatten", []string{"x"}, []string{"y"}, fmt.Sprintf("flatten_param { axis: %d end_axis: %d }", axisText(r, a, len(s)), axisText(r, e, len(s))))
}

// neuron draws one of the element-wise layers with its parameters.
func neuron(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	switch r.IntN(8) {
	case 0:
		n.positiveInput()
		n.layer("Power", []string{"x"}, []string{"y"}, fmt.Sprintf("power_param { power: %g scale: %g shift: %g }",
			Pick(r, 2.0, 0.5, -1.0, 3.0, 1.0, 0.0), Pick(r, 1.0, 0.5, 2.0), Pick(r, 0.0, 0.3))) // a positive base: no NaN
	case 1:
		n.layer("ELU", []string{"x"}, []string{"y"}, fmt.Sprintf("elu_param { alpha: %g }", Pick(r, 1.0, 0.3, 2.0)))
	case 2:
		n.layer("ReLU", []string{"x"}, []string{"y"}, fmt.Sprintf("relu_param { negative_slope: %g }", Pick(r, 0.0, 0.1, -0.5)))
	case 3:
		n.positiveInput()
		n.layer("Log", []string{"x"}, []string{"y"}, fmt.Sprintf("log_param { base: %g scale: %g shift: %g }",
			Pick(r, -1.0, 2.0, 10.0), Pick(r, 1.0, 0.5), Pick(r, 0.0, 0.4)))
	case 4:
		n.layer("Exp", []string{"x"}, []string{"y"}, fmt.Sprintf("exp_param { base: %g scale: %g shift: %g }",
			Pick(r, -1.0, 2.0, 0.5), Pick(r, 1.0, -0.5), Pick(r, 0.0, 0.4)))
	case 5:
		channelAxis := len(s) >= 2
		p := ""
		if !channelAxis || r.IntN(3) == 0 {
			p = "prelu_param { channel_shared: true filler { type: \"uniform\" min: -0.5 max: 0.5 } }"
		} else {
			p = "prelu_param { filler { type: \"uniform\" min: -0.5 max: 0.5 } }"
		}
		n.layer("PReLU", []string{"x"}, []string{"y"}, p)
	case 6:
		n.layer("Clip", []string{"x"}, []string{"y"}, fmt.Sprintf("clip_param { min: %g max: %g }", Pick(r, -0.5, 0.0), Pick(r, 0.3, 0.8)))
	default:
		n.layer("Swish", []string{"x"}, []string{"y"}, fmt.Sprintf("swish_param { beta: %g }", Pick(r, 1.0, 0.5, 2.0)))
	}
}

func mvn(r *rand.Rand, n *Net) {
	n.input("x", []int{Between(r, 1, 3), Between(r, 1, 3), Between(r, 1, 4), Between(r, 2, 4)})
	n.layer("MVN", []string{"x"}, []string{"y"}, fmt.Sprintf("mvn_param { normalize_variance: %v across_channels: %v eps: %g }",
		r.IntN(2) == 0, r.IntN(2) == 0, Pick(r, 1e-9, 0.01)))
}

func batchNorm(r *rand.Rand, n *Net) {
	s := []int{Between(r, 2, 4), Between(r, 1, 3)}
	for range r.IntN(3) {
		s = append(s, Between(r, 1, 3))
	}
	n.input("x", s)
	n.Flags = append(n.Flags, "--fill_param under_test[0]=uniform:-0.5:0.5", "--fill_param under_test[1]=uniform:0.5:2",
		"--fill_param under_test[2]=constant:"+Pick(r, "1", "1.5", "0"))
	p := fmt.Sprintf("batch_norm_param { moving_average_fraction: %g eps: %g", Pick(r, 0.999, 0.9), Pick(r, 1e-5, 0.01))
	if r.IntN(3) == 0 {
		p += fmt.Sprintf(" use_global_stats: %v", r.IntN(2) == 0)
	}
	if r.IntN(3) == 0 {
		n.Flags = append(n.Flags, "--phase TEST")
	}
	n.layer("BatchNorm", []string{"x"}, []string{"y"}, p+" }")
}

func spp(r *rand.Rand, n *Net) {
	n.input("x", []int{Between(r, 1, 2), Between(r, 1, 3), Between(r, 2, 9), Between(r, 2, 9)})
	n.layer("SPP", []string{"x"}, []string{"y"}, fmt.Sprintf("spp_param { pyramid_height: %d pool: %s }", Between(r, 1, 3), Pick(r, "MAX", "AVE")))
}

func im2col(r *rand.Rand, n *Net) {
	k := []int{Between(r, 1, 3), Between(r, 1, 3)}
	pad := []int{Between(r, 0, 1), Between(r, 0, 1)}
	stride := []int{Between(r, 1, 2), Between(r, 1, 2)}
	n.input("x", []int{Between(r, 1, 2), Between(r, 1, 3), Between(r, k[0], 6), Between(r, k[1], 6)})
	n.layer("Im2col", []string{"x"}, []string{"y"}, "convolution_param {"+spatialParams(r, "kernel", k, -1, true)+
		spatialParams(r, "pad", pad, 0, true)+spatialParams(r, "stride", stride, 1, true)+" }")
}

func embed(r *rand.Rand, n *Net) {
	inputs := Between(r, 2, 6)
	n.NoForceBackward = true
	n.input("idx", randomShape(r))
	n.Flags = append(n.Flags, fmt.Sprintf("--fill idx=int:0:%d", inputs-1))
	p := fmt.Sprintf("embed_param { num_output: %d input_dim: %d %s", Between(r, 1, 4), inputs, Pick(r, fillers...))
	if r.IntN(3) == 0 {
		p += " bias_term: false"
	}
	n.layer("Embed", []string{"idx"}, []string{"y"}, p+" }")
}

// classes draws class scores of shape [n, classes, spatial...] with the
// class axis at 1 and integer labels of [n, spatial...] over the classes.
func classes(r *rand.Rand, n *Net, spatial bool) (classes int) {
	classes = Between(r, 2, 5)
	s := []int{Between(r, 1, 4), classes}
	label := []int{s[0]}
	for range r.IntN(2) * boolInt(spatial) {
		d := Between(r, 1, 3)
		s, label = append(s, d), append(label, d)
	}
	n.input("x", s)
	n.input("label", label)
	n.Flags = append(n.Flags, "--fill x=uniform:-3:3", fmt.Sprintf("--fill label=int:0:%d", classes-1))
	return classes
}

// accuracy draws Accuracy with top_k, an ignored label and its
// per-class top (no gradient: no force_backward).
func accuracy(r *rand.Rand, n *Net) {
	k := classes(r, n, true)
	n.NoForceBackward = true
	p := fmt.Sprintf("accuracy_param { top_k: %d", Between(r, 1, k))
	if r.IntN(2) == 0 {
		p += fmt.Sprintf(" ignore_label: %d", r.IntN(k))
	}
	tops := []string{"out_acc"} // 0-D: no probe takes it
	if r.IntN(2) == 0 {
		tops = append(tops, "per_class")
	}
	n.layer("Accuracy", []string{"x", "label"}, tops, p+" }")
}

// argMax draws ArgMax over an axis or the flattened items, with top_k and
// out_max_val (no gradient: no force_backward).
func argMax(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	n.NoForceBackward = true
	p := "argmax_param {"
	limit := 1
	for _, d := range s[1:] {
		limit *= d
	}
	if r.IntN(2) == 0 {
		axis := r.IntN(len(s))
		limit = s[axis]
		p += fmt.Sprintf(" axis: %d", axisText(r, axis, len(s)))
	}
	if limit < 1 || len(s) < 2 && !strings.Contains(p, "axis") {
		limit = 1
	}
	p += fmt.Sprintf(" top_k: %d out_max_val: %v }", Between(r, 1, limit), r.IntN(2) == 0)
	n.layer("ArgMax", []string{"x"}, []string{"y"}, p)
}

// loss draws one of the other loss layers with its parameters.
func loss(r *rand.Rand, n *Net) {
	normalization := func() string {
		if r.IntN(2) == 0 {
			return ""
		}
		return " loss_param { normalization: " + Pick(r, "FULL", "VALID", "BATCH_SIZE", "NONE") + " }"
	}
	switch r.IntN(6) {
	case 0:
		s := randomShape(r)
		n.input("x", s)
		n.input("y", s)
		n.layer("EuclideanLoss", []string{"x", "y"}, []string{"loss"}, "")
	case 1:
		s := randomShape(r)
		n.input("x", s)
		n.input("t", s)
		n.Flags = append(n.Flags, "--fill x=uniform:-4:4", "--fill t=int:0:1")
		n.layer("SigmoidCrossEntropyLoss", []string{"x", "t"}, []string{"loss"}, normalization())
	case 2:
		// One label per item: Caffe reads a label of more axes as if flat
		// (item i's label is element i), which gocaffe refuses.
		classes(r, n, false)
		n.layer("HingeLoss", []string{"x", "label"}, []string{"loss"}, "hinge_loss_param { norm: "+Pick(r, "L1", "L2")+" }")
	case 3:
		k := Between(r, 2, 4)
		num := Between(r, 1, 4)
		n.input("x", []int{num, k})
		n.input("label", []int{num})
		n.input("h", []int{k, k})
		n.Flags = append(n.Flags, "--fill x=uniform:0.05:1", fmt.Sprintf("--fill label=int:0:%d", k-1), "--fill h=uniform:0:2")
		// Caffe cannot force a gradient into H: the loss's gradient flows
		// back to a learnable bias of 0 per class instead (Bias, not Scale, whose
		// Caffe gradient leaves scratch values in x's diff).
		n.NoForceBackward = true
		n.layers = append(n.layers, `layer { name: "shift" type: "Bias" bottom: "x" top: "xs"
  bias_param { axis: 1 num_axes: 1 filler { type: "constant" value: 0 } } }
`)
		n.layer("InfogainLoss", []string{"xs", "label", "h"}, []string{"loss"}, "")
	case 4:
		num, dim := Between(r, 1, 4), Between(r, 1, 3)
		n.input("a", []int{num, dim})
		n.input("b", []int{num, dim})
		n.input("sim", []int{num})
		n.Flags = append(n.Flags, "--fill sim=int:0:1")
		n.layer("ContrastiveLoss", []string{"a", "b", "sim"}, []string{"loss"},
			fmt.Sprintf("contrastive_loss_param { margin: %g legacy_version: %v }", Pick(r, 1.0, 0.5, 3.0), r.IntN(2) == 0))
	default:
		k := Between(r, 2, 4)
		num := Between(r, 1, 4)
		n.input("x", []int{num, k})
		n.input("label", []int{num})
		n.Flags = append(n.Flags, "--fill x=uniform:0.05:1", fmt.Sprintf("--fill label=int:0:%d", k-1))
		n.layer("MultinomialLogisticLoss", []string{"x", "label"}, []string{"loss"}, "")
	}
}

// recurrent draws RNN or LSTM: sequence lengths, a static input, exposed
// hidden states, and debug-free unrolled nets.
func recurrent(r *rand.Rand, n *Net) {
	typ := Pick(r, "RNN", "LSTM")
	steps, num, out := Between(r, 1, 4), Between(r, 1, 3), Between(r, 1, 4)
	x := append([]int{steps, num}, dims(r, Between(r, 1, 2))...) // Caffe's x: T x N x features
	n.input("x", x)
	n.input("cont", []int{steps, num})
	n.Flags = append(n.Flags, "--fill cont=int:0:1")
	bottoms, tops := []string{"x", "cont"}, []string{"y"}
	if r.IntN(3) == 0 {
		n.input("xs", append([]int{num}, dims(r, Between(r, 1, 2))...))
		bottoms = append(bottoms, "xs")
	}
	p := fmt.Sprintf("recurrent_param { num_output: %d %s", out, Pick(r, fillers...))
	if r.IntN(2) == 0 {
		p += " expose_hidden: true"
		states := []string{"h0"}
		if typ == "LSTM" {
			states = append(states, "c0")
		}
		for _, st := range states {
			n.input(st, []int{1, num, out})
			bottoms = append(bottoms, st)
			tops = append(tops, st[:1]+"T")
		}
	}
	n.layer(typ, bottoms, tops, p+" }")
}

// elementwise draws one of the parameterless (or nearly) neuron layers.
func elementwise(r *rand.Rand, n *Net) {
	s := randomShape(r)
	n.input("x", s)
	switch typ := Pick(r, "AbsVal", "BNLL", "Sigmoid", "TanH", "Threshold", "Dropout"); typ {
	case "Threshold": // no gradient in Caffe
		n.NoForceBackward = true
		n.layer(typ, []string{"x"}, []string{"y"}, fmt.Sprintf("threshold_param { threshold: %g }", Pick(r, 0.0, 0.3, -0.4)))
	case "Dropout": // TEST: the identity, whatever the ratio
		n.Flags = append(n.Flags, "--phase TEST")
		n.layer(typ, []string{"x"}, []string{"y"}, fmt.Sprintf("dropout_param { dropout_ratio: %g }", Pick(r, 0.5, 0.1, 0.9)))
	default:
		n.layer(typ, []string{"x"}, []string{"y"}, "")
	}
}

// chain draws a net of two to six layers of the common kinds one after
// another on an image: in-place activations, BatchNorm and Scale, residual
// sums and concatenations (so Split layers, in-place runs and the memory
// plan's reuse meet), with a probe on the end.
func chain(r *rand.Rand, n *Net) {
	c, h, w := Between(r, 1, 4), Between(r, 3, 8), Between(r, 3, 8)
	n.input("x", []int{Between(r, 1, 2), c, h, w})
	cur, id := "x", 0
	next := func() string { id++; return fmt.Sprintf("l%d", id) }
	// The operations are drawn first: a convolution before a BatchNorm has
	// no bias, for BatchNorm takes the mean away and the bias's gradient
	// is zero in exact arithmetic, rounding errors in both programs.
	ops := make([]int, Between(r, 2, 6))
	lastNorm := -1
	for i := range ops {
		if ops[i] = r.IntN(9); ops[i] == 2 {
			lastNorm = i
		}
	}
	step := 0
	conv := func(bottom string, outputs, k int, bias bool) string {
		name := next()
		n.named(name, "Convolution", []string{bottom}, []string{name}, fmt.Sprintf(
			"convolution_param { num_output: %d kernel_size: %d pad: %d bias_term: %v %s }", outputs, k, k/2,
			bias && step > lastNorm, Pick(r, fillers...)), false)
		return name
	}
	for i, op := range ops {
		step = i
		switch {
		case op == 0 || cur == "x" && op <= 3: // in-place layers need a top of their own first
			nc := Between(r, 1, 4)
			cur, c = conv(cur, nc, Pick(r, 1, 3), true), nc
		case op == 1:
			n.named(next(), Pick(r, "ReLU", "Sigmoid", "TanH"), []string{cur}, []string{cur}, "", false)
		case op == 2: // on a convolution of its own
			nc := Between(r, 1, 4)
			cur, c = conv(cur, nc, Pick(r, 1, 3), false), nc
			name := next()
			n.Flags = append(n.Flags, "--fill_param "+name+"[0]=uniform:-0.5:0.5", "--fill_param "+name+"[1]=uniform:0.5:2",
				"--fill_param "+name+"[2]=constant:1")
			n.named(name, "BatchNorm", []string{cur}, []string{cur}, "", false)
			n.named(next(), "Scale", []string{cur}, []string{cur},
				`scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } bias_filler { type: "gaussian" std: 0.2 } }`, false)
		case op == 3:
			name := next()
			n.named(name, "Eltwise", []string{cur, conv(cur, c, 3, true)}, []string{name}, "eltwise_param { operation: "+Pick(r, "SUM", "PROD", "MAX")+" }", false)
			cur = name
		case op == 4:
			a, b := Between(r, 1, 3), Between(r, 1, 3)
			name := next()
			n.named(name, "Concat", []string{conv(cur, a, 1, true), conv(cur, b, 3, true)}, []string{name}, "", false)
			cur, c = name, a+b
		case op == 5 && h >= 2 && w >= 2:
			name := next()
			n.named(name, "Pooling", []string{cur}, []string{name}, "pooling_param { pool: MAX kernel_size: 2 stride: 2 }", false)
			cur, h, w = name, (h-1)/2+1, (w-1)/2+1
		case op == 6:
			name := next()
			n.named(name, "Pooling", []string{cur}, []string{name}, "pooling_param { pool: AVE kernel_size: 3 stride: 1 pad: 1 }", false)
			cur = name
		case op == 7:
			name := next()
			n.named(name, "LRN", []string{cur}, []string{name}, "lrn_param { local_size: 3 alpha: 0.5 beta: 0.75 }", false)
			cur = name
		default:
			name := next()
			n.named(name, "Dropout", []string{cur}, []string{cur}, "dropout_param { dropout_ratio: 0.3 }", false)
			n.Flags = append(n.Flags, "--phase TEST")
		}
	}
	n.probes = append(n.probes, cur)
}

// DBs are the databases and mean file the data generator reads:
// byte datums of 3 x 7 x 6 in LMDB and LevelDB, float datums of 2 x 5 x 5
// in LMDB, and a mean of the byte datums' shape.
type DBs struct{ bytesLMDB, bytesLevelDB, floatsLMDB, mean string }

// WriteDBs writes the data generator's databases and mean file into dir.
func WriteDBs(dir string) (*DBs, error) {
	r := rand.New(rand.NewPCG(3, 3))
	d := &DBs{filepath.Join(dir, "bytes_lmdb"), filepath.Join(dir, "bytes_leveldb"), filepath.Join(dir, "floats_lmdb"), filepath.Join(dir, "mean.binaryproto")}
	pixels := make([][]byte, 9)
	for i := range pixels {
		pixels[i] = make([]byte, 3*7*6)
		for j := range pixels[i] {
			pixels[i][j] = byte(r.IntN(256))
		}
	}
	bytesDatum := func(i int) *caffepb.Datum {
		return &caffepb.Datum{Channels: proto.Int32(3), Height: proto.Int32(7), Width: proto.Int32(6), Data: pixels[i], Label: proto.Int32(int32(i % 4))}
	}
	floats := make([][]float32, 9)
	for i := range floats {
		floats[i] = make([]float32, 2*5*5)
		for j := range floats[i] {
			floats[i][j] = float32(r.Float64()*4 - 2)
		}
	}
	floatDatum := func(i int) *caffepb.Datum {
		return &caffepb.Datum{Channels: proto.Int32(2), Height: proto.Int32(5), Width: proto.Int32(5), FloatData: floats[i], Label: proto.Int32(int32(i))}
	}
	for _, db := range []struct {
		backend caffepb.DataParameter_DB
		path    string
		datum   func(int) *caffepb.Datum
	}{{caffepb.DataParameter_LMDB, d.bytesLMDB, bytesDatum}, {caffepb.DataParameter_LEVELDB, d.bytesLevelDB, bytesDatum}, {caffepb.DataParameter_LMDB, d.floatsLMDB, floatDatum}} {
		if err := writeDB(db.backend, db.path, 9, db.datum); err != nil {
			return nil, err
		}
	}
	mean := make([]float32, 3*7*6)
	for j := range mean {
		mean[j] = float32(r.Float64() * 255)
	}
	b, err := proto.Marshal(&caffepb.BlobProto{Num: proto.Int32(1), Channels: proto.Int32(3), Height: proto.Int32(7), Width: proto.Int32(6), Data: mean})
	if err != nil {
		return nil, err
	}
	return d, os.WriteFile(d.mean, b, 0o644)
}

// writeDB writes count datums under the keys 00000000, 00000001, ...
func writeDB(backend caffepb.DataParameter_DB, path string, count int, datum func(i int) *caffepb.Datum) error {
	db, err := data.Open(backend, path, data.Write)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.NewTransaction()
	if err != nil {
		return err
	}
	for i := range count {
		b, err := proto.Marshal(datum(i))
		if err != nil {
			return err
		}
		if err := tx.Put(fmt.Appendf(nil, "%08d", i), b); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dataLayer draws a Data layer in TEST (no random mirror or crop) over
// one of the databases, with a scale, mean values or the mean file, a
// centred crop, and batch sizes that wrap around the records.
func dataLayer(r *rand.Rand, n *Net) {
	n.NoForceBackward = true
	n.Flags = append(n.Flags, "--phase TEST")
	source, backend, c, h, w := n.dbs.bytesLMDB, "LMDB", 3, 7, 6
	switch r.IntN(3) {
	case 1:
		source, backend = n.dbs.bytesLevelDB, "LEVELDB"
	case 2:
		source, c, h, w = n.dbs.floatsLMDB, 2, 5, 5
	}
	var tp []string
	if r.IntN(2) == 0 {
		tp = append(tp, fmt.Sprintf("scale: %g", Pick(r, 0.00390625, 0.5, 2.0)))
	}
	switch r.IntN(4) {
	case 1:
		tp = append(tp, fmt.Sprintf("mean_value: %g", Pick(r, 104.0, 0.5, 128.0)))
	case 2:
		for range c {
			tp = append(tp, fmt.Sprintf("mean_value: %g", Pick(r, 104.0, 117.0, -0.5, 123.0)))
		}
	case 3:
		if c == 3 {
			tp = append(tp, fmt.Sprintf("mean_file: %q", n.dbs.mean))
		}
	}
	if r.IntN(2) == 0 {
		tp = append(tp, fmt.Sprintf("crop_size: %d", Between(r, 1, min(h, w))))
	}
	p := fmt.Sprintf("data_param { source: %q backend: %s batch_size: %d }", source, backend, Between(r, 1, 12))
	if len(tp) > 0 {
		p += " transform_param { " + strings.Join(tp, " ") + " }"
	}
	n.named("under_test", "Data", nil, []string{"data", "out_label"}, p, true)
}

var Generators = []Generator{
	{"convolution", convolution("Convolution")},
	{"convolution", convolution("Convolution")},
	{"deconvolution", convolution("Deconvolution")},
	{"deconvolution", convolution("Deconvolution")},
	{"pooling", pooling},
	{"pooling", pooling},
	{"lrn", lrn},
	{"concat", concat},
	{"slice", slice},
	{"crop", crop},
	{"reshape", reshape},
	{"reduction", reduction},
	{"eltwise", eltwise},
	{"scale", scaleOrBias("Scale")},
	{"bias", scaleOrBias("Bias")},
	{"innerproduct", innerProduct},
	{"softmax", softmax},
	{"softmaxwithloss", softmaxLoss},
	{"tile", tile},
	{"flatten", flatten},
	{"neuron", neuron},
	{"mvn", mvn},
	{"batchnorm", batchNorm},
	{"spp", spp},
	{"im2col", im2col},
	{"embed", embed},
	{"accuracy", accuracy},
	{"argmax", argMax},
	{"loss", loss},
	{"loss", loss},
	{"recurrent", recurrent},
	{"recurrent", recurrent},
	{"elementwise", elementwise},
	{"chain", chain},
	{"chain", chain},
	{"chain", chain},
	{"data", dataLayer},
}
