package onnx

import (
	"github.com/gocaffe/gocaffe/layer"
)

func init() {
	register(convolution, "Convolution", "ConvolutionDepthwise", "Deconvolution")
	register(innerProduct, "InnerProduct")
}

// convolution writes Conv (ConvTranspose for Deconvolution) per bottom,
// with the layer's weights as they are: Caffe's weight layout (out, in /
// group, kernel...) is ONNX Conv's, and Deconvolution's (in, out / group,
// kernel...) is ConvTranspose's. Both compute Caffe's output sizes from
// symmetric pads.
func convolution(c *layerCtx) error {
	geo, ok := c.layer.(interface{ ConvGeometry() layer.ConvGeometry })
	if !ok {
		return c.unsupported("the layer does not report its convolution geometry")
	}
	g := geo.ConvGeometry()
	if g.Axis != 1 {
		return c.unsupported("its channel axis is %d; ONNX convolves with the channels on axis 1", g.Axis)
	}
	w, err := c.param(0, "weight", nil)
	if err != nil {
		return err
	}
	in := []string{"", w}
	if g.BiasTerm {
		bias, err := c.param(1, "bias", nil)
		if err != nil {
			return err
		}
		in = append(in, bias)
	}
	op := "Conv"
	if g.Deconvolution {
		op = "ConvTranspose"
	}
	for j := range c.out {
		in[0] = c.in[j]
		c.node(op, j, append([]string(nil), in...),
			attrInts("kernel_shape", g.Kernel), attrInts("strides", g.Stride),
			attrInts("pads", append(append([]int(nil), g.Pad...), g.Pad...)),
			attrInts("dilations", g.Dilation), attrInt("group", g.Group))
	}
	return nil
}

// innerProduct writes Gemm on the bottom flattened at the layer's axis:
// y = x W^T + b (W as stored, num_output x K), or x W + b with transpose.
// An axis other than 1 reshapes the product back to Caffe's top shape.
func innerProduct(c *layerCtx) error {
	ip := c.lp.GetInnerProductParam()
	shape := c.inShapes[0]
	axis, err := c.axis(ip.GetAxis(), len(shape))
	if err != nil {
		return err
	}
	x := c.in[0]
	if len(shape) != 2 || axis != 1 {
		x = c.tmp("Flatten", []string{x}, attrInt("axis", axis))
	}
	w, err := c.param(0, "weight", nil)
	if err != nil {
		return err
	}
	in := []string{x, w}
	if ip.GetBiasTerm() {
		bias, err := c.param(1, "bias", nil)
		if err != nil {
			return err
		}
		in = append(in, bias)
	}
	transB := 1
	if ip.GetTranspose() {
		transB = 0
	}
	if axis == 1 {
		c.node("Gemm", 0, in, attrInt("transB", transB))
		return nil
	}
	y := c.tmp("Gemm", in, attrInt("transB", transB))
	target, err := c.shapeConst(c.outShapes[0], axis > 0)
	if err != nil {
		return err
	}
	c.node("Reshape", 0, []string{y, target})
	return nil
}
