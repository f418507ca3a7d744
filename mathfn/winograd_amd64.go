//go:build amd64 && !purego

package mathfn

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2 transforms of winograd_amd64.s, eight tiles at a time. Plain
// Go transformed one tile at a time and took 70% of a Winograd layer's
// time (ResNet-50's 64-channel 56x56 layer at batch 1: 8.7 ms against
// im2col's 6.1 on a 2-vCPU AVX2 EPYC), the products 25%.

//go:noescape
func winoInputAVX2(ptrs *[8]unsafe.Pointer, ld int, dst unsafe.Pointer, xiStride int, tmp *[288]float32)

//go:noescape
func winoOutputAVX2(src unsafe.Pointer, xiStride int, ptrs *[8]unsafe.Pointer, ld int, tmp *[192]float32, bias float32, relu int)

// winoVector says whether float32 transforms run on the AVX2 kernels.
var winoVector = cpu.X86.HasAVX2 && cpu.X86.HasFMA
