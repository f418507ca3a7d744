package mathfn

import (
	"unsafe"

	"github.com/gocaffe/gocaffe/mathfn/internal/vec"
)

// ReLUZero sets y to Caffe's zero-slope ReLU of x, std::max(x, 0) + 0 *
// std::min(x, 0): +0 where x < 0 is finite, NaN (the x86 default one) for
// -Inf (0 * -Inf), x elsewhere (-0 and NaN included); y may be x. The
// ReLU layer, and the layers a ReLU is fused into on the host (BatchNorm
// with its Scale, Eltwise SUM), all take it, so that fused and unfused
// give the same bits. Vector kernels where the CPU has them; the rest
// decided on the bits without a data-dependent branch
// (one comparison of floats mispredicted about every other element on a
// convolution's output: CIFAR-10 quick's relu1 took 0.8 ms, Caffe's 0.5).
func ReLUZero[T Float](x, y []T) {
	done := vec.ReLUPrefix(x, y) // AVX-512 where the CPU has it
	x, y = x[done:], y[done:len(x)]
	if len(x) == 0 {
		return
	}
	data, out := unsafe.Pointer(unsafe.SliceData(x)), unsafe.Pointer(unsafe.SliceData(y))
	if unsafe.Sizeof(x[0]) == 4 {
		reluBits(unsafe.Slice((*uint32)(data), len(x)), unsafe.Slice((*uint32)(out), len(y)), 0x7f800000, 0xffc00000)
	} else {
		reluBits(unsafe.Slice((*uint64)(data), len(x)), unsafe.Slice((*uint64)(out), len(y)), 0x7ff0000000000000, 0xfff8000000000000)
	}
}

// reluBits clears the values whose bits are those of a finite negative
// number: the sign set, and a magnitude above zero and below inf's (not
// -0, not a NaN). -Inf becomes the x86 default NaN, nan, as Caffe's 0 *
// min(-Inf, 0) makes it.
func reluBits[U uint32 | uint64](x, y []U, inf, nan U) {
	y = y[:len(x)]
	shift := 8*unsafe.Sizeof(inf) - 1
	negInf := inf | 1<<shift
	for i, b := range x {
		mag := b &^ (1 << shift)
		var negative U
		if mag-1 < inf-1 { // wraps for 0
			negative = b >> shift
		}
		b &^= -negative
		if b == negInf {
			b = nan
		}
		y[i] = b
	}
}
