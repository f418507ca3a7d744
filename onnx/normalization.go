package onnx

import (
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	register(lrn, "LRN")
	register(batchNorm, "BatchNorm")
	register(scale, "Scale")
	register(bias, "Bias")
}

// lrn writes ONNX's LRN across channels (the same formula: k + alpha/n
// times the sum of squares over n channels centred on each). Within a
// channel, which ONNX has no operator for, it composes Caffe's own
// construction: x * (1 + alpha * avgpool(x^2))^-beta, the pool padded by
// (n-1)/2 and counting the padding, so that it always divides by n^2.
func lrn(c *layerCtx) error {
	p := c.lp.GetLrnParam()
	size := int(p.GetLocalSize())
	if p.GetNormRegion() == caffepb.LRNParameter_ACROSS_CHANNELS {
		c.node("LRN", 0, c.in, attrInt("size", size), attrFloat("alpha", p.GetAlpha()),
			attrFloat("beta", p.GetBeta()), attrFloat("bias", p.GetK()))
		return nil
	}
	x := c.in[0]
	pad := (size - 1) / 2
	sq := c.tmp("Mul", []string{x, x})
	avg := c.tmp("AveragePool", []string{sq}, attrInts("kernel_shape", []int{size, size}),
		attrInts("pads", []int{pad, pad, pad, pad}), attrInt("count_include_pad", 1))
	den := c.affine(avg, p.GetAlpha(), 1)
	s := c.tmp("Pow", []string{den, c.scalar("neg_beta", -p.GetBeta())})
	c.finish("Mul", x, s)
	return nil
}

// batchNorm writes BatchNormalization with Caffe's stored statistics
// divided by its moving-average factor (blob 2; a zero factor means zero
// statistics, as in Caffe), a unit scale and a zero shift.
func batchNorm(c *layerCtx) error {
	p := c.lp.GetBatchNormParam()
	if p != nil && p.UseGlobalStats != nil && !p.GetUseGlobalStats() {
		return c.unsupported("use_global_stats: false normalises with each batch's own statistics, which an exported model does not")
	}
	if len(c.inShapes[0]) < 2 {
		return c.unsupported("ONNX's BatchNormalization needs the channels on axis 1 of a blob of 2 or more axes, got %v", c.inShapes[0])
	}
	if len(c.params) < 3 || len(c.params[2].data) != 1 {
		return c.unsupported("it needs its three blobs: mean, variance and the moving-average factor")
	}
	factor := float32(0)
	if f := c.params[2].data[0]; f != 0 {
		factor = 1 / f
	}
	channels := c.inShapes[0][1]
	stats := make([][]float32, 2)
	for i := range stats {
		if len(c.params[i].data) != channels {
			return c.unsupported("blob %d holds %d values for %d channels", i, len(c.params[i].data), channels)
		}
		stats[i] = make([]float32, channels)
		for k, v := range c.params[i].data {
			stats[i][k] = v * factor
		}
	}
	shape := []int{channels}
	c.node("BatchNormalization", 0, []string{
		c.in[0], c.constant("scale", shape, filled(channels, 1)), c.constant("shift", shape, filled(channels, 0)),
		c.constant("mean", shape, stats[0]), c.constant("var", shape, stats[1]),
	}, attrFloat("epsilon", p.GetEps()))
	return nil
}

// scale writes x * s (+ b): s the layer's blob 0, or its second bottom;
// b the blob after s's.
func scale(c *layerCtx) error {
	p := c.lp.GetScaleParam()
	y, err := c.broadcast("Mul", p.GetAxis(), 0, "scale", p.GetBiasTerm())
	if err != nil || !p.GetBiasTerm() {
		return err
	}
	biasBlob := 1
	if len(c.in) > 1 {
		biasBlob = 0
	}
	b, err := c.broadcastParam(biasBlob, p.GetAxis(), "bias")
	if err != nil {
		return err
	}
	c.finish("Add", y, b)
	return nil
}

// bias writes x + b: b the layer's blob, or its second bottom.
func bias(c *layerCtx) error {
	_, err := c.broadcast("Add", c.lp.GetBiasParam().GetAxis(), 0, "bias", false)
	return err
}

// broadcast writes op(x, v), where v (the second bottom or learned blob
// i) spans the axes from axis on, reshaped with trailing ones to broadcast
// as Caffe's Scale and Bias do. With more to follow it returns a fresh
// value, else it writes top 0.
func (c *layerCtx) broadcast(op string, axis int32, i int, name string, more bool) (string, error) {
	var v string
	if len(c.in) > 1 {
		a, err := c.axis(axis, len(c.inShapes[0]))
		if err != nil {
			return "", err
		}
		v = c.in[1]
		if shape := broadcastShape(c.inShapes[1], len(c.inShapes[0])-a); len(shape) != len(c.inShapes[1]) {
			if v, err = c.reshape(v, shape, true); err != nil {
				return "", err
			}
		}
	} else {
		var err error
		if v, err = c.broadcastParam(i, axis, name); err != nil {
			return "", err
		}
	}
	if more {
		return c.tmp(op, []string{c.in[0], v}), nil
	}
	c.finish(op, c.in[0], v)
	return "", nil
}

// broadcastParam adds learned blob i shaped to broadcast from axis.
func (c *layerCtx) broadcastParam(i int, axis int32, name string) (string, error) {
	if i >= len(c.params) {
		return "", c.unsupported("its learned blob %d (%s) is missing", i, name)
	}
	a, err := c.axis(axis, len(c.inShapes[0]))
	if err != nil {
		return "", err
	}
	return c.param(i, name, broadcastShape(c.params[i].shape, len(c.inShapes[0])-a))
}

// broadcastShape pads shape with trailing ones to span axes axes.
func broadcastShape(shape []int, axes int) []int {
	out := append([]int(nil), shape...)
	for len(out) < axes {
		out = append(out, 1)
	}
	return out
}
