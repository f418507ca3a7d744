package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
)

// eltwiseSumHost is Eltwise SUM's forward pass on the host: the generic
// pass (eltwiseForward) sweeps the top once per bottom (a scale, then an
// axpy for each further bottom), this one block by block, the block of
// the top staying in the cache while each bottom is added, with the
// blocks spread over the cores. The arithmetic is the generic pass's
// (scal's and axpy's): y = c0*x0, then y += ck*xk rounded product by
// product, a coefficient 0 setting y to 0 (first) or skipping its bottom
// (later), as BLAS does. ResNet-50's residual sums at batch 4 on 2 cores
// took 11.8 ms in the generic pass against Caffe's 6.1.
type eltwiseSumHost[T layer.Float] struct {
	xs     [][]T
	y      []T
	coeffs []T
	// relu: the zero-slope ReLU in place on the top is fused into the
	// passes (eltwiseLayer.FuseNext).
	relu bool
	// The fused backward pass's operands: the top's data and diff, and
	// the bottoms' diffs (nil where not wanted).
	dy  []T
	dxs [][]T
	// part and backPart are blocks and backBlocks as method values,
	// made once: a pass allocates nothing.
	part, backPart func(part, lo, hi int)
}

// eltwiseSumBlock is the elements of a block: 4096 float32 values of the
// top (16 KB) stay in a 32 KB L1 cache beside a bottom's.
const eltwiseSumBlock = 4096

// forward computes top = the coefficient-weighted sum of the bottoms,
// with relu its zero-slope ReLU.
func (h *eltwiseSumHost[T]) forward(coeffs []T, bottom, top []*blob.Blob[T], relu bool) {
	h.relu = relu
	if h.part == nil {
		h.part = h.blocks
	}
	h.xs = h.xs[:0]
	for _, b := range bottom {
		h.xs = append(h.xs, b.CPUData())
	}
	h.coeffs, h.y = coeffs, top[0].MutableCPUData()[:top[0].Count()]
	kit.UnitsParallel((len(h.y)+eltwiseSumBlock-1)/eltwiseSumBlock, eltwiseSumBlock, h.part)
	clear(h.xs)
	h.y = nil
}

// blocks computes blocks [lo, hi) of the top.
func (h *eltwiseSumHost[T]) blocks(_, lo, hi int) {
	for blk := lo; blk < hi; blk++ {
		start := blk * eltwiseSumBlock
		end := min(start+eltwiseSumBlock, len(h.y))
		y := h.y[start:end]
		if c := h.coeffs[0]; c == 0 {
			clear(y)
		} else {
			mathfn.MulScalar(len(y), c, h.xs[0][start:end], y)
		}
		for k, x := range h.xs[1:] {
			if c := h.coeffs[k+1]; c != 0 {
				mathfn.AddScaled(len(y), c, x[start:end], y)
			}
		}
		if h.relu {
			mathfn.ReLUZero(y, y)
		}
	}
}

// backwardReLU is the backward pass of the sum with its fused zero-slope
// ReLU: dz = dy times the ReLU's factor of y (the ReLU's backward pass,
// in place on the top's diff, which then holds dz as after Caffe's
// in-place ReLU), then each wanted bottom's diff = its coefficient times
// dz (eltwiseBackward's copy or scale), block by block in the cache and
// the blocks spread over the cores: the top's diff is swept once and the
// bottoms' written once, where the two layers apart swept the top's diff
// three times, the copies on one core.
func (h *eltwiseSumHost[T]) backwardReLU(coeffs []T, top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) {
	if h.backPart == nil {
		h.backPart = h.backBlocks
	}
	h.coeffs, h.y, h.dy = coeffs, top[0].CPUData()[:top[0].Count()], top[0].MutableCPUDiff()
	h.dxs = h.dxs[:0]
	for i, b := range bottom {
		var dx []T
		if propagateDown[i] {
			dx = b.MutableCPUDiff()
		}
		h.dxs = append(h.dxs, dx)
	}
	blocks := (len(h.y) + eltwiseSumBlock - 1) / eltwiseSumBlock
	kit.UnitsParallel(blocks, eltwiseSumBlock, h.backPart)
	clear(h.dxs)
	h.y, h.dy = nil, nil
}

// backBlocks computes blocks [lo, hi) of backwardReLU.
func (h *eltwiseSumHost[T]) backBlocks(part, lo, hi int) {
	for blk := lo; blk < hi; blk++ {
		start := blk * eltwiseSumBlock
		end := min(start+eltwiseSumBlock, len(h.y))
		y, dy := h.y[start:end], h.dy[start:end]
		dz := dy // in place, as Caffe's ReLU
		for i := mathfn.ReLUBackPrefix(y, dy, dz, 1, 0, 0); i < len(y); i++ {
			dz[i] = dy[i] * (T(kit.Btoi(y[i] > 0)) + 0*T(kit.Btoi(y[i] <= 0)))
		}
		for i, dx := range h.dxs {
			if dx == nil {
				continue
			}
			if c := h.coeffs[i]; c == 1 {
				copy(dx[start:end], dz)
			} else {
				mathfn.Scale(len(dz), c, dz, dx[start:end])
			}
		}
	}
}

// splitSumHost is Split's backward pass on the host: splitBackward's
// arithmetic (a copy of one top's diff, or the sum of the first two and an
// axpy of each further one), block by block and the blocks spread over
// the cores. On one core the sums of ResNet-50's splits at batch 8 took
// 29 ms of a pass on a Zen 4 EPYC, bound by one core's share of the
// memory's bandwidth.
type splitSumHost[T layer.Float] struct {
	dys [][]T
	dx  []T
	// part is blocks as a method value, made once.
	part func(part, lo, hi int)
}

// backward sets bottom's diff to the sum of the tops'.
func (h *splitSumHost[T]) backward(top []*blob.Blob[T], bottom *blob.Blob[T]) {
	if h.part == nil {
		h.part = h.blocks
	}
	h.dys = h.dys[:0]
	for _, t := range top {
		h.dys = append(h.dys, t.CPUDiff())
	}
	h.dx = bottom.MutableCPUDiff()[:bottom.Count()]
	kit.UnitsParallel((len(h.dx)+eltwiseSumBlock-1)/eltwiseSumBlock, eltwiseSumBlock, h.part)
	clear(h.dys)
	h.dx = nil
}

// blocks sums blocks [lo, hi).
func (h *splitSumHost[T]) blocks(_, lo, hi int) {
	for blk := lo; blk < hi; blk++ {
		start := blk * eltwiseSumBlock
		end := min(start+eltwiseSumBlock, len(h.dx))
		dx := h.dx[start:end]
		if len(h.dys) == 1 {
			copy(dx, h.dys[0][start:end])
			continue
		}
		mathfn.Add(len(dx), h.dys[0][start:end], h.dys[1][start:end], dx)
		for _, dy := range h.dys[2:] {
			mathfn.Axpy(len(dx), 1, dy[start:end], dx)
		}
	}
}
