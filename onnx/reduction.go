package onnx

import (
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
)

func init() {
	register(reduction, "Reduction")
	register(mvn, "MVN")
	register(argMax, "ArgMax")
	register(embed, "Embed")
	register(batchReindex, "BatchReindex")
}

// batchReindex writes Gather of the bottom's items that the (float)
// indices name.
func batchReindex(c *layerCtx) error {
	idx := c.tmp("Cast", []string{c.in[1]}, attrInt("to", int(onnxpb.TensorProto_INT64)))
	c.node("Gather", 0, []string{c.in[0], idx}, attrInt("axis", 0))
	return nil
}

// reduce writes a Reduce* operator over axes. ReduceSum takes its axes as
// an input from opset 13, the other reductions from opset 18.
func (c *layerCtx) reduce(op, x string, axes []int, keepDims bool) string {
	keep := 0
	if keepDims {
		keep = 1
	}
	attrs := []*onnxpb.AttributeProto{attrInt("keepdims", keep)}
	in := []string{x}
	if op == "ReduceSum" || c.opset >= 18 {
		in = append(in, c.b.int64s(c.name+"/axes", ints64(axes)))
	} else {
		attrs = append(attrs, attrInts("axes", axes))
	}
	return c.tmp(op, in, attrs...)
}

// axesFrom lists the axes from first to the last of a rank.
func axesFrom(first, rank int) []int {
	var out []int
	for a := first; a < rank; a++ {
		out = append(out, a)
	}
	return out
}

// reduction writes Caffe's Reduction: the sum, sum of absolute values, sum
// of squares or mean over the axes from axis on, times coeff.
func reduction(c *layerCtx) error {
	p := c.lp.GetReductionParam()
	rank := len(c.inShapes[0])
	axis, err := c.axis(p.GetAxis(), rank)
	if err != nil {
		return err
	}
	if c.dynamic && axis == 0 {
		return c.unsupported("it reduces over the batch axis, which a model with a dynamic batch cannot declare")
	}
	ops := map[caffepb.ReductionParameter_ReductionOp]string{
		caffepb.ReductionParameter_SUM: "ReduceSum", caffepb.ReductionParameter_ASUM: "ReduceL1",
		caffepb.ReductionParameter_SUMSQ: "ReduceSumSquare", caffepb.ReductionParameter_MEAN: "ReduceMean",
	}
	op, ok := ops[p.GetOperation()]
	if !ok {
		return c.unsupported("unknown operation %v", p.GetOperation())
	}
	y := c.reduce(op, c.in[0], axesFrom(axis, rank), false)
	if k := p.GetCoeff(); k != 1 {
		c.finish("Mul", y, c.scalar("coeff", k))
		return nil
	}
	c.finish("Identity", y)
	return nil
}

// mvn writes x - mean, and with normalize_variance (x - mean) / (sqrt(var)
// + eps) as Caffe computes it (eps added to the deviation, not the
// variance), over each image's channels or each channel's plane.
func mvn(c *layerCtx) error {
	p := c.lp.GetMvnParam()
	first := 2
	if p.GetAcrossChannels() {
		first = 1
	}
	axes := axesFrom(first, len(c.inShapes[0]))
	x := c.in[0]
	mean := c.reduce("ReduceMean", x, axes, true)
	if !p.GetNormalizeVariance() {
		c.finish("Sub", x, mean)
		return nil
	}
	d := c.tmp("Sub", []string{x, mean})
	variance := c.reduce("ReduceMean", c.tmp("Mul", []string{d, d}), axes, true)
	den := c.tmp("Add", []string{c.tmp("Sqrt", []string{variance}), c.scalar("eps", p.GetEps())})
	c.finish("Div", d, den)
	return nil
}

// argMax writes Caffe's ArgMax for top_k 1: the index of the largest
// value (the last of equal ones, as Caffe's sort of (value, index) pairs
// has it) along axis, or over each item with no axis, as floats; with
// out_max_val the value too (alone along an axis, after the index per
// item).
func argMax(c *layerCtx) error {
	p := c.lp.GetArgmaxParam()
	if p.GetTopK() != 1 {
		return c.unsupported("top_k %d: ONNX's TopK does not promise Caffe's order among equal values", p.GetTopK())
	}
	x, axis, hasAxis := c.in[0], 1, p != nil && p.Axis != nil
	if hasAxis {
		var err error
		if axis, err = c.axis(p.GetAxis(), len(c.inShapes[0])); err != nil {
			return err
		}
	} else {
		x = c.tmp("Flatten", []string{x}, attrInt("axis", 1))
	}
	maxValue := func() string {
		values := c.b.unique(c.name + "/values")
		c.b.node("TopK", c.name, []string{x, c.b.int64s(c.name+"/k", []int64{1})},
			[]string{values, c.b.unique(c.name + "/indices")}, attrInt("axis", axis))
		return values
	}
	if hasAxis && p.GetOutMaxVal() {
		c.finish("Identity", maxValue())
		return nil
	}
	index := c.tmp("ArgMax", []string{x}, attrInt("axis", axis), attrInt("keepdims", 1), attrInt("select_last_index", 1))
	index = c.tmp("Cast", []string{index}, attrInt("to", int(onnxpb.TensorProto_FLOAT)))
	if hasAxis {
		c.finish("Identity", index)
		return nil
	}
	if p.GetOutMaxVal() {
		index = c.tmp("Concat", []string{index, maxValue()}, attrInt("axis", 1))
	}
	return reshapeInto(c, index, true)
}

// embed writes Gather of the weight rows the (float) indices name, plus
// the bias.
func embed(c *layerCtx) error {
	w, err := c.param(0, "weight", nil)
	if err != nil {
		return err
	}
	idx := c.tmp("Cast", []string{c.in[0]}, attrInt("to", int(onnxpb.TensorProto_INT64)))
	if !c.lp.GetEmbedParam().GetBiasTerm() {
		c.node("Gather", 0, []string{w, idx}, attrInt("axis", 0))
		return nil
	}
	b, err := c.param(1, "bias", nil)
	if err != nil {
		return err
	}
	c.finish("Add", c.tmp("Gather", []string{w, idx}, attrInt("axis", 0)), b)
	return nil
}
