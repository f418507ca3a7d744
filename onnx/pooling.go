package onnx

import (
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
)

func init() { register(pooling, "Pooling") }

// pooling writes MaxPool or AveragePool with Caffe's output size.
//
// ONNX's ceil_mode is not Caffe's rounding (Caffe also drops a last window
// that would start in the right padding, and runtimes differ on ceil_mode's
// last window), so the pools are written with floor rounding and an
// explicit end pad that yields exactly Caffe's number of windows.
//
// Average pooling divides by the window clipped to the padded image:
// Caffe's padding counts, the extra end pad must not. A Pad node adds
// Caffe's padding as zeros, which then count as elements, and the pool
// excludes its own end pad (count_include_pad 0).
func pooling(c *layerCtx) error {
	geo, ok := c.layer.(interface{ PoolGeometry() layer.PoolGeometry })
	if !ok {
		return c.unsupported("the layer does not report its pooling geometry")
	}
	g := geo.PoolGeometry()
	if len(c.out) > 1 {
		return c.unsupported("its second top, the max positions, has no ONNX form")
	}
	var op string
	switch g.Method {
	case caffepb.PoolingParameter_MAX:
		op = "MaxPool"
	case caffepb.PoolingParameter_AVE:
		op = "AveragePool"
	default:
		return c.unsupported("%v pooling has no ONNX operator", g.Method)
	}
	if g.Global {
		c.node("Global"+op, 0, c.in)
		return nil
	}
	x, padH, padW := c.in[0], g.PadH, g.PadW
	if op == "AveragePool" && (padH > 0 || padW > 0) {
		pads := c.b.int64s(c.name+"/pads", []int64{0, 0, int64(padH), int64(padW), 0, 0, int64(padH), int64(padW)})
		x = c.tmp("Pad", []string{x, pads})
		g.Height, g.Width = g.Height+2*padH, g.Width+2*padW
		padH, padW = 0, 0
	}
	endH, err := endPad(c, "height", g.Height, g.KernelH, g.StrideH, padH, g.PooledH)
	if err != nil {
		return err
	}
	endW, err := endPad(c, "width", g.Width, g.KernelW, g.StrideW, padW, g.PooledW)
	if err != nil {
		return err
	}
	attrs := []*onnxpb.AttributeProto{
		attrInts("kernel_shape", []int{g.KernelH, g.KernelW}),
		attrInts("strides", []int{g.StrideH, g.StrideW}),
		attrInts("pads", []int{padH, padW, endH, endW}),
	}
	if op == "AveragePool" {
		attrs = append(attrs, attrInt("count_include_pad", 0))
	}
	c.node(op, 0, []string{x}, attrs...)
	return nil
}

// endPad is the pad after the last element of an axis that makes floor
// rounding give the pooled size Caffe computed.
func endPad(c *layerCtx, axis string, in, kernel, stride, pad, pooled int) (int, error) {
	end := max(0, (pooled-1)*stride+kernel-in-pad)
	if got := (in+pad+end-kernel)/stride + 1; got != pooled {
		return 0, c.unsupported("no end padding reproduces Caffe's %d outputs along the %s (input %d, kernel %d, stride %d, pad %d)",
			pooled, axis, in, kernel, stride, pad)
	}
	return end, nil
}
