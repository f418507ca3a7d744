//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate go run ./internal/gemmgen gemm_amd64.s

// The micro-kernels of gemm_amd64.s: C[mr x nr] (row stride ldc elements)
// += the product of a packed panel of op(A) (mr values per step) and of
// op(B) (nr values per step) over k steps.

//go:noescape
func sgemmKernelAVX512(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelAVX512(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmPackAVX512(dst, src unsafe.Pointer, ld, k, rows, width int, alpha float32)

//go:noescape
func dgemmPackAVX512(dst, src unsafe.Pointer, ld, k, rows, width int, alpha float64)

//go:noescape
func sgemmTransPackAVX512(dst, src unsafe.Pointer, ld, blocks, rows, width int, alpha float32)

//go:noescape
func sdotKernelAVX512(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

// sdot1x4AVX512 is sdotKernelAVX512 of one row of A (dot_amd64.s).
//
//go:noescape
func sdot1x4AVX512(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

//go:noescape
func ddotKernelAVX512(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

// The AVX-512 float32 kernels of the first 1 to 11 rows of a 12-row A~
// panel (a product's last rows).
//
//go:noescape
func sgemmKernelAVX512Rows1(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows2(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows3(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows4(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows5(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows6(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows7(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows8(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows9(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows10(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows11(k int, a, b, c unsafe.Pointer, ldc int)

// sgemmRowsAVX512 are they, by number of rows.
var sgemmRowsAVX512 = []func(k int, a, b, c unsafe.Pointer, ldc int){nil, sgemmKernelAVX512Rows1, sgemmKernelAVX512Rows2,
	sgemmKernelAVX512Rows3, sgemmKernelAVX512Rows4, sgemmKernelAVX512Rows5, sgemmKernelAVX512Rows6, sgemmKernelAVX512Rows7,
	sgemmKernelAVX512Rows8, sgemmKernelAVX512Rows9, sgemmKernelAVX512Rows10, sgemmKernelAVX512Rows11}

// The AVX-512 float32 kernels that store the tile to C instead of adding
// it (microKernel.set and setRows), whole and of 1 to 11 rows.
//
//go:noescape
func sgemmKernelAVX512Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows1Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows2Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows3Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows4Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows5Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows6Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows7Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows8Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows9Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows10Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX512Rows11Set(k int, a, b, c unsafe.Pointer, ldc int)

// sgemmRowsSetAVX512 are the storing ones of fewer rows, by number.
var sgemmRowsSetAVX512 = []func(k int, a, b, c unsafe.Pointer, ldc int){nil, sgemmKernelAVX512Rows1Set, sgemmKernelAVX512Rows2Set,
	sgemmKernelAVX512Rows3Set, sgemmKernelAVX512Rows4Set, sgemmKernelAVX512Rows5Set, sgemmKernelAVX512Rows6Set, sgemmKernelAVX512Rows7Set,
	sgemmKernelAVX512Rows8Set, sgemmKernelAVX512Rows9Set, sgemmKernelAVX512Rows10Set, sgemmKernelAVX512Rows11Set}

// sgemmKernelAVX512Half is sgemmKernelAVX512 for the first 16 columns of
// the B~ panel alone (microKernel.half).
//
//go:noescape
func sgemmKernelAVX512Half(k int, a, b, c unsafe.Pointer, ldc int)

// The AVX2 dot kernels (dot_amd64.s): 3 rows of A, and 1, by 4 of B.
//
//go:noescape
func sdot3x4AVX2(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

//go:noescape
func sdot1x4AVX2(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)

//go:noescape
func sgemmKernelAVX2(k int, a, b, c unsafe.Pointer, ldc int)

// sgemmTransPackAVX2 packs 8 (or 6) rows of blocks*8 steps (pack_amd64.s).
//
//go:noescape
func sgemmTransPackAVX2(dst, src unsafe.Pointer, ld, blocks, rows, width int, alpha float32)

//go:noescape
func dgemmKernelAVX2(k int, a, b, c unsafe.Pointer, ldc int)

// The AVX2 kernels that store the tile to C instead of adding it
// (microKernel.set).
//
//go:noescape
func sgemmKernelAVX2Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func dgemmKernelAVX2Set(k int, a, b, c unsafe.Pointer, ldc int)

// sgemmKernelAVX2Half is sgemmKernelAVX2 for the first 8 columns of
// the B~ panel alone (microKernel.half).
//
//go:noescape
func sgemmKernelAVX2Half(k int, a, b, c unsafe.Pointer, ldc int)

// The float32 AVX2 kernels of strips of tiles (microKernel.tiles and
// setTiles), steps in bytes.
//
//go:noescape
func sgemmTilesAVX2(k int, a, b, c unsafe.Pointer, ldc, n, aStep, bStep, cStep int)

//go:noescape
func sgemmTilesAVX2Set(k int, a, b, c unsafe.Pointer, ldc, n, aStep, bStep, cStep int)

// The AVX2 float32 kernels of the first 1 to 5 rows of a 6-row A~ panel
// (a product's last rows), adding the tile to C and storing it.
//
//go:noescape
func sgemmKernelAVX2Rows1(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows2(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows3(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows4(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows5(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows1Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows2Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows3Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows4Set(k int, a, b, c unsafe.Pointer, ldc int)

//go:noescape
func sgemmKernelAVX2Rows5Set(k int, a, b, c unsafe.Pointer, ldc int)

// sgemmRowsAVX2 and sgemmRowsSetAVX2 are they, by number of rows.
var (
	sgemmRowsAVX2 = []func(k int, a, b, c unsafe.Pointer, ldc int){nil, sgemmKernelAVX2Rows1, sgemmKernelAVX2Rows2,
		sgemmKernelAVX2Rows3, sgemmKernelAVX2Rows4, sgemmKernelAVX2Rows5}
	sgemmRowsSetAVX2 = []func(k int, a, b, c unsafe.Pointer, ldc int){nil, sgemmKernelAVX2Rows1Set, sgemmKernelAVX2Rows2Set,
		sgemmKernelAVX2Rows3Set, sgemmKernelAVX2Rows4Set, sgemmKernelAVX2Rows5Set}
)

// asmRows adapts kernels by number of rows (nil at 0) to the driver's
// signature.
func asmRows[T Float](fs []func(k int, a, b, c unsafe.Pointer, ldc int)) []func(k int, a, b, c []T, ldc int) {
	rows := make([]func(k int, a, b, c []T, ldc int), len(fs))
	for r, f := range fs[1:] {
		rows[r+1] = asmKernel[T](f)
	}
	return rows
}

// archSgemmKernels returns the float32 kernels this CPU can run, best
// first.
func archSgemmKernels() []microKernel[float32] {
	var ks []microKernel[float32]
	if cpu.X86.HasAVX512F {
		dot := asmDot[float32](sdotKernelAVX512, 16, 4)
		dot.one = asmDot[float32](sdot1x4AVX512, 16, 1).fn
		ks = append(ks, microKernel[float32]{"AVX-512", 12, 32, asmKernel[float32](sgemmKernelAVX512), sgemmPack, dot,
			asmRows[float32](sgemmRowsAVX512), asmKernel[float32](sgemmKernelAVX512Set), nil, nil, asmKernel[float32](sgemmKernelAVX512Half),
			asmRows[float32](sgemmRowsSetAVX512)})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		dot := asmDot[float32](sdot3x4AVX2, 8, 3)
		dot.one = asmDot[float32](sdot1x4AVX2, 8, 1).fn
		ks = append(ks, microKernel[float32]{"AVX2", 6, 16, asmKernel[float32](sgemmKernelAVX2), sgemmGatherAVX2, dot,
			asmRows[float32](sgemmRowsAVX2), asmKernel[float32](sgemmKernelAVX2Set),
			asmTiles[float32](sgemmTilesAVX2), asmTiles[float32](sgemmTilesAVX2Set), asmKernel[float32](sgemmKernelAVX2Half),
			asmRows[float32](sgemmRowsSetAVX2)})
	}
	return ks
}

// archDgemmKernels returns the float64 kernels this CPU can run, best
// first.
func archDgemmKernels() []microKernel[float64] {
	var ks []microKernel[float64]
	if cpu.X86.HasAVX512F {
		ks = append(ks, microKernel[float64]{"AVX-512", 12, 16, asmKernel[float64](dgemmKernelAVX512), asmGather[float64](dgemmPackAVX512), asmDot[float64](ddotKernelAVX512, 8, 4), nil, nil, nil, nil, nil, nil})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, microKernel[float64]{"AVX2", 6, 8, asmKernel[float64](dgemmKernelAVX2), nil, nil, nil, asmKernel[float64](dgemmKernelAVX2Set), nil, nil, nil, nil})
	}
	return ks
}

// asmKernel adapts an assembly kernel to the driver's signature.
func asmKernel[T Float](f func(k int, a, b, c unsafe.Pointer, ldc int)) func(k int, a, b, c []T, ldc int) {
	return func(k int, a, b, c []T, ldc int) {
		f(k, unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(c)), ldc)
	}
}

// asmTiles adapts an assembly kernel of strips of tiles, its steps in
// bytes, to the driver's signature, steps in elements.
func asmTiles[T Float](f func(k int, a, b, c unsafe.Pointer, ldc, n, aStep, bStep, cStep int)) func(k int, a, b, c []T, ldc, n, aStep, bStep, cStep int) {
	return func(k int, a, b, c []T, ldc, n, aStep, bStep, cStep int) {
		size := int(unsafe.Sizeof(a[0]))
		f(k, unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b)), unsafe.Pointer(unsafe.SliceData(c)), ldc, n,
			aStep*size, bStep*size, cStep*size)
	}
}

// asmGather adapts an assembly packing gather to the driver's signature.
func asmGather[T Float](f func(dst, src unsafe.Pointer, ld, k, rows, width int, alpha T)) func(dst, src []T, ld, k, rows, width int, alpha T) {
	return func(dst, src []T, ld, k, rows, width int, alpha T) {
		f(unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), ld, k, rows, width, alpha)
	}
}

// sgemmPack packs a float32 panel for the AVX-512 kernel: a full panel (12
// rows of A~, or 32 of B~ as two halves of 16) through in-register
// transposes, 16 steps at a time; the steps past the last multiple of 16,
// and short panels (a product's last rows or columns), through gathers.
func sgemmPack(dst, src []float32, ld, k, rows, width int, alpha float32) {
	blocks := k / 16
	if rows != width || blocks == 0 || (width != 12 && width != 32) {
		sgemmPackAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), ld, k, rows, width, alpha)
		return
	}
	if width == 12 {
		sgemmTransPackAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), ld, blocks, 12, 12, alpha)
	} else {
		sgemmTransPackAVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), ld, blocks, 16, 32, alpha)
		sgemmTransPackAVX512(unsafe.Pointer(&dst[16]), unsafe.Pointer(&src[16*ld]), ld, blocks, 16, 32, alpha)
	}
	if rest := k - blocks*16; rest > 0 {
		sgemmPackAVX512(unsafe.Pointer(&dst[blocks*16*width]), unsafe.Pointer(&src[blocks*16]), ld, rest, rows, width, alpha)
	}
}

// sgemmGatherAVX2 is the AVX2 kernel's gather (microKernel.gather): it
// packs rows rows of k steps, src[r*ld + p] times alpha, into panels of
// width (16 for B~, 6 for A~). Full halves of a B~ panel (8 rows) and full
// A~ panels go 8 steps at a time through sgemmTransPackAVX2's in-register
// transposes; the steps past the last multiple of 8 and the rows of short
// panels value by value. Lanes past rows are zeroed. Each value is copied
// (times alpha) as the Go loops of packA and packB copy it: the products
// are the same bit for bit.
func sgemmGatherAVX2(dst, src []float32, ld, k, rows, width int, alpha float32) {
	blocks := k / 8
	fast := blocks * 8 // steps [0, fast) of rows [0, fastRows) by transposes
	fastRows := 0
	if blocks > 0 {
		switch {
		case width == 16 && rows >= 8:
			sgemmTransPackAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), ld, blocks, 8, 16, alpha)
			fastRows = 8
			if rows == 16 {
				sgemmTransPackAVX2(unsafe.Pointer(&dst[8]), unsafe.Pointer(&src[8*ld]), ld, blocks, 8, 16, alpha)
				fastRows = 16
			}
		case width == 6 && rows == 6:
			sgemmTransPackAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), ld, blocks, 6, 6, alpha)
			fastRows = 6
		}
	}
	if fastRows == 0 {
		fast = 0
	}
	for r := range width {
		p0 := 0
		if r < fastRows {
			p0 = fast
		}
		if r >= rows {
			for p := range k {
				dst[p*width+r] = 0
			}
			continue
		}
		row := src[r*ld : r*ld+k]
		if alpha == 1 {
			for p := p0; p < k; p++ {
				dst[p*width+r] = row[p]
			}
			continue
		}
		for p := p0; p < k; p++ {
			dst[p*width+r] = alpha * row[p]
		}
	}
}

// asmDot adapts an assembly dot kernel of vectors of lanes elements: the
// aRows*4 dot products of rows a[i*lda:] (i < aRows) and b[j*ldb:] (j <
// 4) over k (a multiple of lanes) as aRows*4 vectors of lanes partial sums
// in out.
func asmDot[T Float](f func(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer), lanes, aRows int) *dotKernel[T] {
	return &dotKernel[T]{lanes: lanes, aRows: aRows, fn: func(k int, a []T, lda int, b []T, ldb int, out []T) {
		f(k, unsafe.Pointer(unsafe.SliceData(a)), lda, unsafe.Pointer(unsafe.SliceData(b)), ldb, unsafe.Pointer(unsafe.SliceData(out)))
	}}
}
