package onnx

import (
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	register(eltwise, "Eltwise")
	register(concat, "Concat")
	register(slice, "Slice")
	register(crop, "Crop")
	register(flatten, "Flatten")
	register(reshapeLayer, "Reshape")
	register(parameter, "Parameter")
	register(tile, "Tile")
}

// eltwise writes Mul (PROD), Sum with each coefficient applied first
// (SUM), or Max (MAX) of all bottoms.
func eltwise(c *layerCtx) error {
	p := c.lp.GetEltwiseParam()
	switch p.GetOperation() {
	case caffepb.EltwiseParameter_PROD:
		x := c.in[0]
		for _, y := range c.in[1 : len(c.in)-1] {
			x = c.tmp("Mul", []string{x, y})
		}
		c.finish("Mul", x, c.in[len(c.in)-1])
	case caffepb.EltwiseParameter_SUM:
		terms := append([]string(nil), c.in...)
		for i, k := range p.GetCoeff() {
			if k != 1 && i < len(terms) {
				terms[i] = c.tmp("Mul", []string{terms[i], c.scalar("coeff", k)})
			}
		}
		c.finish("Sum", terms...)
	case caffepb.EltwiseParameter_MAX:
		c.finish("Max", c.in...)
	default:
		return c.unsupported("unknown operation %v", p.GetOperation())
	}
	return nil
}

// axisOf is the Concat or Slice axis the layer resolved.
func axisOf(c *layerCtx) (int, error) {
	l, ok := c.layer.(interface{ Axis() int })
	if !ok {
		return 0, c.unsupported("the layer does not report its axis")
	}
	return l.Axis(), nil
}

func concat(c *layerCtx) error {
	if len(c.in) == 1 {
		return identity(c)
	}
	axis, err := axisOf(c)
	if err != nil {
		return err
	}
	c.node("Concat", 0, c.in, attrInt("axis", axis))
	return nil
}

// slice writes one Slice per top, cut where the tops' shapes say.
func slice(c *layerCtx) error {
	axis, err := axisOf(c)
	if err != nil {
		return err
	}
	if c.dynamic && axis == 0 {
		return c.unsupported("it cuts the batch axis, which a model with a dynamic batch cannot write down (export with a fixed batch)")
	}
	axes := c.b.int64s(c.name+"/axes", []int64{int64(axis)})
	start := 0
	for j, shape := range c.outShapes {
		end := start + shape[axis]
		c.node("Slice", j, []string{
			c.in[0], c.b.int64s(c.name+"/starts", []int64{int64(start)}), c.b.int64s(c.name+"/ends", []int64{int64(end)}), axes,
		})
		start = end
	}
	return nil
}

// crop writes one Slice over the axes from crop_param.axis on, at the
// offsets the layer resolved.
func crop(c *layerCtx) error {
	l, ok := c.layer.(interface{ Offsets() []int })
	if !ok {
		return c.unsupported("the layer does not report its offsets")
	}
	offsets, shape := l.Offsets(), c.outShapes[0]
	var axes, starts, ends []int64
	for a, off := range offsets {
		if shape[a] == c.inShapes[0][a] {
			continue
		}
		if c.dynamic && a == 0 {
			return c.unsupported("it crops the batch axis, which a model with a dynamic batch cannot write down (export with a fixed batch)")
		}
		axes, starts, ends = append(axes, int64(a)), append(starts, int64(off)), append(ends, int64(off+shape[a]))
	}
	if len(axes) == 0 {
		c.finish("Identity", c.in[0])
		return nil
	}
	c.finish("Slice", c.in[0], c.b.int64s(c.name+"/starts", starts), c.b.int64s(c.name+"/ends", ends),
		c.b.int64s(c.name+"/axes", axes))
	return nil
}

// flatten writes ONNX's Flatten where it means the same (from axis 1 to
// the end), a Reshape to the top's shape otherwise.
func flatten(c *layerCtx) error {
	p := c.lp.GetFlattenParam()
	rank := len(c.inShapes[0])
	axis, err := c.axis(p.GetAxis(), rank)
	if err != nil {
		return err
	}
	end, err := c.axis(p.GetEndAxis(), rank)
	if err != nil {
		return err
	}
	if axis == 1 && end == rank-1 {
		c.node("Flatten", 0, c.in, attrInt("axis", 1))
		return nil
	}
	return reshapeTo(c, axis > 0)
}

// reshapeLayer writes a Reshape to the top's shape.
func reshapeLayer(c *layerCtx) error {
	p := c.lp.GetReshapeParam()
	axis := int(p.GetAxis())
	if axis < 0 {
		axis += len(c.inShapes[0]) + 1
	}
	dims := p.GetShape().GetDim()
	keepsBatch := axis > 0 || (len(dims) > 0 && dims[0] == 0)
	return reshapeTo(c, keepsBatch)
}

// reshapeTo writes the bottom reshaped to the top's shape.
func reshapeTo(c *layerCtx, keepsBatch bool) error { return reshapeInto(c, c.in[0], keepsBatch) }

// reshapeInto writes value x reshaped to the top's shape.
func reshapeInto(c *layerCtx, x string, keepsBatch bool) error {
	target, err := c.shapeConst(c.outShapes[0], keepsBatch)
	if err != nil {
		return err
	}
	c.finish("Reshape", x, target)
	return nil
}

// parameter writes the learned blob as a constant.
func parameter(c *layerCtx) error {
	w, err := c.param(0, "value", nil)
	if err != nil {
		return err
	}
	c.finish("Identity", w)
	return nil
}

// tile writes Tile with tile_param.tiles repeats along its axis.
func tile(c *layerCtx) error {
	p := c.lp.GetTileParam()
	axis, err := c.axis(p.GetAxis(), len(c.inShapes[0]))
	if err != nil {
		return err
	}
	repeats := make([]int64, len(c.inShapes[0]))
	for i := range repeats {
		repeats[i] = 1
	}
	repeats[axis] = int64(p.GetTiles())
	c.finish("Tile", c.in[0], c.b.int64s(c.name+"/repeats", repeats))
	return nil
}
