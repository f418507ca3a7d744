//go:build !amd64 || purego

package layer

// poolVector is false: this build has no vector kernel for max pooling.
const poolVector = false

// maxPoolRun is never called without a vector kernel.
func maxPoolRun(plane []int32, offsets []int32, starts *[16]int32, mask uint16, y, idx []float32) uint16 {
	panic("layer: maxPoolRun without a vector kernel")
}
