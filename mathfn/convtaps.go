package mathfn

import "unsafe"

// A convolution's weight gradient, dW += dy * im2col(x)^T, as dot
// products along the output positions (GemmConvTapsDot). GemmConvTaps
// computes it as a GEMM, whose panels of B~ hold the columns transposed:
// each tap's values along a block's positions, gathered from the padded
// image and then transposed, a third of the product's time on CIFAR-10
// quick's 5x5 layers (32 output channels: every packed value then serves
// 32 rows only). A dot product needs no transposition: each tap's values
// along an output row are contiguous in the padded image, so the kernel
// reads them from there, sixteen positions a vector, against the top
// gradient's rows, and sums the vectors' lanes at the end. The sums run
// in another order than the GEMM's (within rounding).

// convTapsDotRows and convTapsDotTaps are the kernel's block: rows of the
// top gradient (output channels) by taps.
const (
	convTapsDotRows = 4
	convTapsDotTaps = 6
)

// GemmConvTapsDot is GemmConvTaps (C += A * B^T, B the columns of p, A m
// x p.Columns() with rows lda apart) on the dot kernel, reporting whether
// it ran: float32 where the CPU has the kernel, m a multiple of 4, output
// rows a multiple of 16 positions wide, or 8 wide in pairs (CIFAR-10
// quick's conv3), a stride of 1 along them.
func GemmConvTapsDot[T Float](m int, a []T, lda int, p *ConvPanels[T], c []T) bool {
	g := p.g
	var zero T
	ow := g.Out[1]
	pairs := ow == 8 && g.Out[0]%2 == 0
	if !hasConvTapsDot || unsafe.Sizeof(zero) != 4 || !TapsOK[T](g) || m%convTapsDotRows != 0 || ow == 0 ||
		ow%16 != 0 && !pairs || p.images == 0 {
		return false
	}
	n, oh := g.KernelDim(), g.Out[0]
	if m == 0 || n == 0 || oh == 0 {
		return true
	}
	af, x, cf := asF32(a), asF32(p.padded), asF32(c)
	rowStep := g.Stride[0] * p.row
	imageSkip := p.image - oh*rowStep
	_ = af[(m-1)*lda+p.Columns()-1] // every row the kernel reads
	_ = cf[m*n-1]
	vecs, half := ow/16, 0
	if pairs {
		half = oh / 2
	}
	var taps [convTapsDotTaps]int32
	for j0 := 0; j0 < n; j0 += convTapsDotTaps {
		// A last block of fewer taps repeats the last one (its sums
		// dropped): every place the kernel reads is a tap's.
		for j := range taps {
			taps[j] = p.places[min(j0+j, n-1)]
		}
		cols := min(convTapsDotTaps, n-j0)
		convTapsDotKernel(af, lda, x, &taps, p.images, oh, vecs, rowStep, half, imageSkip, cf[j0:], n, m/convTapsDotRows, cols)
	}
	return true
}

// asF32 is s, of float32 elements, as a []float32.
func asF32[T Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
