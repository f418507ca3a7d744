package onnx

import (
	"math"

	"github.com/gocaffe/gocaffe/proto/onnxpb"
)

func init() {
	register(relu, "ReLU")
	register(prelu, "PReLU")
	register(elu, "ELU")
	register(power, "Power")
	register(exp, "Exp")
	register(logLayer, "Log")
	register(threshold, "Threshold")
	register(clip, "Clip")
	register(swish, "Swish")
	register(softmax, "Softmax")
	register(unary("Softplus"), "BNLL")
	register(unary("Abs"), "AbsVal")
	register(unary("Sigmoid"), "Sigmoid")
	register(unary("Tanh"), "TanH")
	register(identity, "Dropout")
}

// unary writes the one ONNX operator that is the layer.
func unary(op string) converter {
	return func(c *layerCtx) error {
		c.node(op, 0, c.in)
		return nil
	}
}

// relu writes Relu, or LeakyRelu with a negative_slope.
func relu(c *layerCtx) error {
	if slope := c.lp.GetReluParam().GetNegativeSlope(); slope != 0 {
		c.node("LeakyRelu", 0, c.in, attrFloat("alpha", slope))
		return nil
	}
	c.node("Relu", 0, c.in)
	return nil
}

// prelu writes PRelu with the slopes shaped to broadcast along axis 1
// (one per channel, or one for all with channel_shared).
func prelu(c *layerCtx) error {
	rank := len(c.inShapes[0])
	shape := []int{1}
	if len(c.params) > 0 && len(c.params[0].data) > 1 {
		shape = append([]int{len(c.params[0].data)}, ones(max(rank-2, 0))...)
	}
	slope, err := c.param(0, "slope", shape)
	if err != nil {
		return err
	}
	c.node("PRelu", 0, []string{c.in[0], slope})
	return nil
}

func elu(c *layerCtx) error {
	c.node("Elu", 0, c.in, attrFloat("alpha", c.lp.GetEluParam().GetAlpha()))
	return nil
}

// affine writes shift + scale*x, leaving out a unit scale and a zero shift.
func (c *layerCtx) affine(x string, scale, shift float32) string {
	if scale != 1 {
		x = c.tmp("Mul", []string{x, c.scalar("scale", scale)})
	}
	if shift != 0 {
		x = c.tmp("Add", []string{x, c.scalar("shift", shift)})
	}
	return x
}

// finish writes the last operation of a chain into top 0: op on x and
// more, or an Identity when the chain is already done.
func (c *layerCtx) finish(op string, in ...string) {
	c.node(op, 0, in)
}

// power writes (shift + scale*x)^power.
func power(c *layerCtx) error {
	p := c.lp.GetPowerParam()
	if p.GetPower() == 1 {
		return c.affineInto(c.in[0], p.GetScale(), p.GetShift())
	}
	x := c.affine(c.in[0], p.GetScale(), p.GetShift())
	c.finish("Pow", x, c.scalar("power", p.GetPower()))
	return nil
}

// affineInto writes shift + scale*x into top 0.
func (c *layerCtx) affineInto(x string, scale, shift float32) error {
	switch {
	case shift != 0:
		c.finish("Add", c.affine(x, scale, 0), c.scalar("shift", shift))
	case scale != 1:
		c.finish("Mul", x, c.scalar("scale", scale))
	default:
		c.finish("Identity", x)
	}
	return nil
}

// logBase is ln(base), base -1 meaning e.
func logBase(base float32) float64 {
	if base == -1 {
		return 1
	}
	return math.Log(float64(base))
}

// exp writes base^(shift + scale*x) as Caffe computes it: base^shift *
// exp(ln(base)*scale * x).
func exp(c *layerCtx) error {
	p := c.lp.GetExpParam()
	inner := float32(logBase(p.GetBase()) * float64(p.GetScale()))
	outer := float32(1)
	switch {
	case p.GetShift() == 0:
	case p.GetBase() == -1:
		outer = float32(math.Exp(float64(p.GetShift())))
	default:
		outer = float32(math.Pow(float64(p.GetBase()), float64(p.GetShift())))
	}
	x := c.affine(c.in[0], inner, 0)
	if outer == 1 {
		c.finish("Exp", x)
		return nil
	}
	c.finish("Mul", c.tmp("Exp", []string{x}), c.scalar("outer", outer))
	return nil
}

// logLayer writes log(shift + scale*x) / ln(base).
func logLayer(c *layerCtx) error {
	p := c.lp.GetLogParam()
	x := c.affine(c.in[0], p.GetScale(), p.GetShift())
	if p.GetBase() == -1 {
		c.finish("Log", x)
		return nil
	}
	c.finish("Mul", c.tmp("Log", []string{x}), c.scalar("base_scale", float32(1/logBase(p.GetBase()))))
	return nil
}

// threshold writes 1 where x > threshold, else 0.
func threshold(c *layerCtx) error {
	above := c.tmp("Greater", []string{c.in[0], c.scalar("threshold", c.lp.GetThresholdParam().GetThreshold())})
	c.node("Cast", 0, []string{above}, attrInt("to", int(onnxpb.TensorProto_FLOAT)))
	return nil
}

func clip(c *layerCtx) error {
	p := c.lp.GetClipParam()
	c.finish("Clip", c.in[0], c.scalar("min", p.GetMin()), c.scalar("max", p.GetMax()))
	return nil
}

// swish writes x * sigmoid(beta*x).
func swish(c *layerCtx) error {
	s := c.tmp("Sigmoid", []string{c.affine(c.in[0], c.lp.GetSwishParam().GetBeta(), 0)})
	c.finish("Mul", c.in[0], s)
	return nil
}

// softmax writes Softmax along the layer's axis (from opset 13 ONNX's
// Softmax normalises along one axis, as Caffe's does).
func softmax(c *layerCtx) error {
	axis, err := c.axis(c.lp.GetSoftmaxParam().GetAxis(), len(c.inShapes[0]))
	if err != nil {
		return err
	}
	c.node("Softmax", 0, c.in, attrInt("axis", axis))
	return nil
}
