//go:build !amd64 || purego

package mathfn

import "unsafe"

// winoVector is false: this build has no vector transforms, and
// Winograd's run in Go.
const winoVector = false

func winoInputAVX2(ptrs *[8]unsafe.Pointer, ld int, dst unsafe.Pointer, xiStride int, tmp *[288]float32) {
	panic("mathfn: no vector Winograd transforms in this build")
}

func winoOutputAVX2(src unsafe.Pointer, xiStride int, ptrs *[8]unsafe.Pointer, ld int, tmp *[192]float32, bias float32, relu int) {
	panic("mathfn: no vector Winograd transforms in this build")
}
