//go:build !amd64 || purego

package vec

// HasMaxPoolRun is false: this build has no vector kernel for max pooling.
const HasMaxPoolRun = false

// MaxPoolRun is never called without a vector kernel.
func MaxPoolRun(plane []int32, offsets []int32, starts *[16]int32, mask uint16, y, idx []float32) uint16 {
	panic("vec: MaxPoolRun without a vector kernel")
}

// MaxPoolRow is never called without a vector kernel.
func MaxPoolRow(plane []int32, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	panic("vec: MaxPoolRow without a vector kernel")
}

// MaxPoolRow2 is never called without a vector kernel.
func MaxPoolRow2(plane []int32, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	panic("vec: MaxPoolRow2 without a vector kernel")
}
