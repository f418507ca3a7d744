package vision

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

// The host's image-by-image passes over a few output rows at a time. An
// image's whole column buffer can be far larger than a core's cache:
// ResNet-50's res2 3x3 convolution has 576 x 3136 columns (7.2 MB) an
// image, which im2col writes out to memory and the product's packing reads
// back, and the backward pass does so twice more (the bottom gradient's
// product writes it, col2im reads it). Its products ran at 60-65 GFLOP/s on
// two cores where res4's, whose columns are smaller, ran at 90-100; its
// conv1 (147 x 12544, 7.4 MB) at 54. Here
// each image's columns are taken a piece of chunk output rows at a time
// (mathfn.Im2colRows), a piece small enough to stay in the cache between
// its im2col, its products and its col2im (mathfn.Col2imRowsAdd), and the
// products read and write the blobs in place through their leading
// dimensions.
//
// The forward pass's outputs are the same sums in the same order (a
// product's blocks of k do not depend on its columns); the weight
// gradient sums over positions in pieces rather than in one product's
// blocks of k, and the bottom gradient adds the pieces' col2im in turn,
// which changes the order of those sums (float rounding only).

// convChunkBytes is the size a piece's column buffer aims at: half of a
// Zen 3 core's 512 KB L2, leaving room for the product's packed panels.
var convChunkBytes = 256 << 10

// convChunkColumns is the fewest positions a piece takes: thinner products
// repack their weights too often and fill their panels badly. ResNet-50's
// 3x3 convolutions of res2 (576 rows of columns) and res3 (1152), in
// pieces of 2 output rows (112 and 56 positions), were as fast and 30%
// slower than whole; its 7x7 conv1 (147 rows), in pieces of 3 rows (336
// positions), was 20% faster forward and backward.
var convChunkColumns = 320

// chunkRows returns the output rows of a piece for the image-by-image
// passes (batch images to a product, 1 for those), or 0 where an image's
// columns are taken whole: batched passes, 1x1 kernels (no columns), N-D
// geometries, deconvolutions, groups, columns of up to twice
// convChunkBytes, and those whose pieces of convChunkColumns positions
// would exceed that.
func (l *convBase[T]) chunkRows(batch int) int {
	if batch > 1 || l.reverse || l.is1x1 || !l.geo.Batchable() || l.group != 1 {
		return 0
	}
	var zero T
	row := l.kernelDim * l.geo.Out[1] * int(unsafe.Sizeof(zero)) // one output row's columns
	oh := l.geo.Out[0]
	if row*oh <= 2*convChunkBytes {
		return 0
	}
	rows := max(convChunkBytes/row, (convChunkColumns+l.geo.Out[1]-1)/l.geo.Out[1])
	if rows*row > 2*convChunkBytes {
		return 0 // pieces wide enough would not stay in the cache either
	}
	// Pieces of even size: 112 rows in pieces of 3 and 3 (and 4), not
	// 3 and 1 at the end.
	pieces := (oh + rows - 1) / rows
	return (oh + pieces - 1) / pieces
}

// forwardChunked is forwardImages for images [lo, hi) of a part, c.chunk
// output rows to a product, into the top in place, with col as the column
// buffer.
func (l *convBase[T]) forwardChunked(lo, hi int, col []T) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	weights := d.Data(l.Blobs()[0])
	oh, ow, hw, kd := l.geo.Out[0], l.geo.Out[1], l.convOutSpatial, l.kernelDim
	for i := range c.bottom {
		x, y := d.Data(c.bottom[i]), d.MutableData(c.top[i])
		for n := lo; n < hi; n++ {
			xn, yn := x[n*l.bottomDim:], y[n*l.topDim:]
			for r0 := 0; r0 < oh; r0 += c.chunk {
				r1 := min(r0+c.chunk, oh)
				cn := (r1 - r0) * ow
				mathfn.Im2colRows(xn, &l.geo, col, cn, r0, r1)
				d.GemmSerialLD(blas.NoTrans, blas.NoTrans, l.numOutput, cn, kd,
					1, weights, kd, col, cn, 0, yn[r0*ow:], hw)
			}
			if l.biasTerm {
				forwardBias(l, d, yn, d.Data(l.Blobs()[1]))
			}
		}
	}
}

// backwardChunked is backwardImages for images [lo, hi) of a part, c.chunk
// output rows to a product: the weight gradient of a piece from its
// columns, then the bottom gradient's columns of the piece into the same
// buffer and summed into the image; col is the column buffer.
func (l *convBase[T]) backwardChunked(lo, hi int, wdiff, bdiff, col []T) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	weights := d.Data(l.Blobs()[0])
	needW := l.ParamPropagateDown(0)
	oh, ow, hw, kd, mo := l.geo.Out[0], l.geo.Out[1], l.convOutSpatial, l.kernelDim, l.numOutput
	for i := range c.top {
		dy, x, dx, ok := topGradients(l, d, c.top[i], c.bottom[i], c.propagateDown[i], lo, hi, bdiff)
		if !ok {
			continue
		}
		for n := lo; n < hi; n++ {
			dyn := dy[n*l.topDim:]
			var dxn []T
			if dx != nil {
				dxn = dx[n*l.bottomDim : (n+1)*l.bottomDim]
				clear(dxn) // the pieces add into it
			}
			for r0 := 0; r0 < oh; r0 += c.chunk {
				r1 := min(r0+c.chunk, oh)
				cn := (r1 - r0) * ow
				if needW {
					mathfn.Im2colRows(x[n*l.bottomDim:], &l.geo, col, cn, r0, r1)
					d.GemmSerialLD(blas.NoTrans, blas.Trans, mo, kd, cn,
						1, dyn[r0*ow:], hw, col, cn, 1, wdiff, kd)
				}
				if dxn != nil {
					// The column buffer is free again: the weight gradient
					// has read it.
					d.GemmSerialLD(blas.Trans, blas.NoTrans, kd, cn, mo,
						1, weights, kd, dyn[r0*ow:], hw, 0, col, cn)
					mathfn.Col2imRowsAdd(col, cn, &l.geo, dxn, r0, r1)
				}
			}
		}
	}
}
