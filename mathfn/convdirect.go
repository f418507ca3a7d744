package mathfn

import (
	"fmt"
	"unsafe"
)

// A convolution's product with its B operand read straight from the
// padded images (GemmConvDirect). GemmConv packs each B~ panel from them
// first (ConvPanels.pack), a copy of every column value that the product
// then reads back: with CIFAR-10 quick's 32 output channels each packed
// value serves 32 rows only, and the packing took a fifth of the
// products' time. Where an output row is whole vectors of 16 positions,
// each step of a tile of 32 positions is two vector loads from the padded
// image (a tap's place plus the runs' starts), so the kernel needs no
// panel at all: the same products, bit for bit, as GemmConv's.

// convDirectMR is the panel height of the packed weights the kernels read
// (the AVX-512 GEMM kernels' mr).
const convDirectMR = 12

// GemmConvDirect is GemmConv without an epilogue (C = op(A) * B, B the
// columns of p, on the calling goroutine), reporting whether it ran:
// float32 where the CPU has the kernels, output rows of whole vectors of
// 16 positions, or of 8 positions in pairs (an even number of rows:
// CIFAR-10 quick's conv3), each vector then two loads of half a vector.
func GemmConvDirect[T Float](pa *PackedA[T], p *ConvPanels[T], c []T) bool {
	g := p.g
	var zero T
	if !hasConvDirect || unsafe.Sizeof(zero) != 4 || pa.kern.mr != convDirectMR || !ConvPanelsOK[T](g) ||
		pa.k != g.KernelDim() || g.Out[1]%16 != 0 && (g.Out[1] != 8 || g.Out[0]%2 != 0) {
		return false
	}
	m, n, k := pa.m, p.Columns(), pa.k
	if m == 0 || n == 0 {
		return true
	}
	x, cf := asF32(p.padded), asF32(c)[:m*n]
	last := int32(0)
	for _, t := range p.places[:k] {
		last = max(last, t)
	}
	rowStep := g.Stride[0] * p.row
	if reach := (p.images-1)*p.image + (g.Out[0]-1)*rowStep + g.Out[1] + int(last); reach > len(x) {
		panic(fmt.Sprintf("mathfn: GemmConvDirect reads %d of %d padded values", reach, len(x)))
	}
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			block := asF32(pa.blocks[pa.off[pc/gemmKC*pa.nic+ic/gemmMC]:])
			p.directBlock(block, p.places[pc:pc+kc], ic, min(gemmMC, m-ic), x, cf, n, pc > 0)
		}
	}
	return true
}

// directBlock computes rows [ic, ic+mc) of C (ldc n) over the steps of
// taps from the weights' block of panels, setting C or adding to it
// (acc), tile by tile of 32 positions of an image (16 at the end of an
// image of 16 positions more than a multiple of 32).
func (p *ConvPanels[T]) directBlock(block []float32, taps []int32, ic, mc int, x, c []float32, n int, acc bool) {
	ow, rowStep := p.g.Out[1], p.g.Stride[0]*p.row
	base := func(img, q int) int { return img*p.image + q/ow*rowStep + q%ow }
	kc := len(taps)
	pairs := 0 // the second row of a vector, rowStep on, in rows of 8
	if ow == 8 {
		pairs = rowStep
	}
	for img := range p.images {
		for q0 := 0; q0 < p.positions; q0 += 32 {
			b0, b1, half := base(img, q0), 0, q0+16 >= p.positions
			if b1 = b0; !half {
				b1 = base(img, q0+16)
			}
			col := img*p.positions + q0
			for ir := 0; ir < mc; ir += convDirectMR {
				rows := min(convDirectMR, mc-ir)
				panel, dst := block[ir*kc:], c[(ic+ir)*n+col:]
				if rows == convDirectMR || rows == 8 {
					convDirectKernel(rows, kc, panel, taps, x[b0:], x[b1:], dst, n, acc, half, pairs)
					continue
				}
				directEdge(rows, kc, panel, taps, x[b0:], x[b1:], dst, n, acc, half, pairs)
			}
		}
	}
}

// directEdge is a tile of rows other than 12 or 8: the kernel of the
// next height up into a tile aside (the panel's rows past the matrix are
// zero), then its rows set into C or added.
func directEdge(rows, kc int, panel []float32, taps []int32, x0, x1, dst []float32, ldc int, acc, half bool, pairs int) {
	var tile [convDirectMR * 32]float32
	convDirectKernel(rows, kc, panel, taps, x0, x1, tile[:], 32, false, false, pairs)
	cols := 32
	if half {
		cols = 16
	}
	for r := range rows {
		d, t := dst[r*ldc:r*ldc+cols], tile[r*32:r*32+cols]
		if !acc {
			copy(d, t)
			continue
		}
		for i, v := range t {
			d[i] += v
		}
	}
}
