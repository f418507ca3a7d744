package onnx

func init() {
	register(permute, "Permute")
	register(axpy, "Axpy")
	register(normalize, "Normalize")
	register(priorBox, "PriorBox")
	register(interp, "Interp")
}

// interp writes PSPNet's Interp as Resize, linear with aligned corners, to
// the layer's output size, after a Slice for its cropping pads.
func interp(c *layerCtx) error {
	if c.dynamic {
		return c.unsupported("Resize needs the output size, batch included, which a dynamic batch leaves open")
	}
	p := c.lp.GetInterpParam()
	x := c.in[0]
	if beg, end := int64(p.GetPadBeg()), int64(p.GetPadEnd()); beg != 0 || end != 0 {
		s := c.inShapes[0]
		x = c.tmp("Slice", []string{x, c.b.int64s(c.name+"/starts", []int64{-beg, -beg}),
			c.b.int64s(c.name+"/ends", []int64{int64(s[2]) + end, int64(s[3]) + end}), c.b.int64s(c.name+"/axes", []int64{2, 3})})
	}
	c.node("Resize", 0, []string{x, "", "", c.b.int64s(c.name+"/sizes", ints64(c.outShapes[0]))},
		attrString("mode", "linear"), attrString("coordinate_transformation_mode", "align_corners"))
	return nil
}

// priorBox writes SSD's PriorBox as the constant it is: its boxes depend
// only on the shapes of its bottoms, which the model fixes (with a dynamic
// batch too: the boxes are the same for every image).
func priorBox(c *layerCtx) error {
	out, err := c.forward()
	if err != nil {
		return err
	}
	c.finish("Identity", c.constant("boxes", c.outShapes[0], out[0]))
	return nil
}

// permute writes SSD's Permute as Transpose with the layer's full order.
func permute(c *layerCtx) error {
	order := make([]int, 0, len(c.inShapes[0]))
	seen := map[int]bool{}
	for _, o := range c.lp.GetPermuteParam().GetOrder() {
		order = append(order, int(o))
		seen[int(o)] = true
	}
	for a := range c.inShapes[0] {
		if !seen[a] {
			order = append(order, a)
		}
	}
	if c.dynamic && order[0] != 0 {
		return c.unsupported("it moves the batch axis, which a model with a dynamic batch cannot declare")
	}
	c.node("Transpose", 0, c.in, attrInts("perm", order))
	return nil
}

// axpy writes SENet's Axpy: a * x + y, a reshaped to broadcast over x's
// planes when it has only the image and channel axes.
func axpy(c *layerCtx) error {
	a := c.in[0]
	if want := broadcastShape(c.inShapes[0][:2], len(c.inShapes[1])); len(c.inShapes[0]) != len(want) {
		var err error
		if a, err = c.reshape(a, want, true); err != nil {
			return err
		}
	}
	c.finish("Add", c.tmp("Mul", []string{a, c.in[1]}), c.in[2])
	return nil
}

// normalize writes SSD's Normalize: x / sqrt(sum(x^2) + eps) times the
// scale, the sum over the channels (or the channels and positions with
// across_spatial).
func normalize(c *layerCtx) error {
	p := c.lp.GetNormParam()
	rank := len(c.inShapes[0])
	axes := []int{1}
	if p.GetAcrossSpatial() {
		axes = axesFrom(1, rank)
	}
	x := c.in[0]
	sum := c.reduce("ReduceSumSquare", x, axes, true)
	norm := c.tmp("Sqrt", []string{c.tmp("Add", []string{sum, c.scalar("eps", p.GetEps())})})
	y := c.tmp("Div", []string{x, norm})
	shape := []int{}
	if !p.GetChannelShared() {
		shape = broadcastShape([]int{c.inShapes[0][1]}, rank-1)
	}
	s, err := c.param(0, "scale", shape)
	if err != nil {
		return err
	}
	c.finish("Mul", y, s)
	return nil
}
