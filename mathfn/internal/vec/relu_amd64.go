//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// reluVector says whether the zero-slope ReLU runs sixteen float32 (eight
// float64) values at a time; reluAVX2 whether float32 runs eight at a
// time where it does not (AMD's cores before Zen 4), where the Go loops
// took ResNet-50's ReLU passes at a few ns a value.
var (
	reluVector = cpu.X86.HasAVX512F
	reluAVX2   = cpu.X86.HasAVX2
)

//go:noescape
func reluF32AVX2(x, y unsafe.Pointer, n int)

//go:noescape
func reluBackF32AVX2(x, dy, dx unsafe.Pointer, n int, pos, neg, nan float32)

//go:noescape
func reluF32AVX512(x, y unsafe.Pointer, n int)

//go:noescape
func reluF64AVX512(x, y unsafe.Pointer, n int)

// ReLUPrefix computes the zero-slope ReLU of as many whole vectors
// as x holds (x and y of one length, the same or apart) and returns how
// many values it did; the caller does the rest.
func ReLUPrefix[T float32 | float64](x, y []T) int {
	if !reluVector {
		if !reluAVX2 || unsafe.Sizeof(x[0]) != 4 || len(x) < 8 {
			return 0
		}
		n := len(x) / 8 * 8
		reluF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
		return n
	}
	lanes := 64 / int(unsafe.Sizeof(x[0]))
	n := len(x) / lanes * lanes
	if n == 0 {
		return 0
	}
	if unsafe.Sizeof(x[0]) == 4 {
		reluF32AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	} else {
		reluF64AVX512(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), n)
	}
	return n
}

// ReLUBackPrefix computes dx = dy * f over as many whole vectors as x
// holds, f being pos where x > 0, neg where x <= 0 and nan where x is a
// NaN, and returns how many values it did (0 where there is no kernel:
// float64, or a CPU without AVX2); the caller does the rest. The AVX2
// kernel serves AVX-512 CPUs too: the pass is bound by memory, and the Go
// loop it replaces took ResNet-50's ReLU backward passes 8 times as long
// as their forward ones (78 ms a pass at batch 8 on a Zen 4 EPYC).
func ReLUBackPrefix[T float32 | float64](x, dy, dx []T, pos, neg, nan T) int {
	if !reluAVX2 || unsafe.Sizeof(x[0]) != 4 || len(x) < 8 {
		return 0
	}
	n := len(x) / 8 * 8
	_, _ = dy[n-1], dx[n-1]
	reluBackF32AVX2(unsafe.Pointer(&x[0]), unsafe.Pointer(&dy[0]), unsafe.Pointer(&dx[0]), n, float32(pos), float32(neg), float32(nan))
	return n
}
