//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// HasMaxPoolRun says whether MaxPoolRun pools sixteen windows at a time
// (MaxPoolRow2 also wants BMI2's PDEP, which every AVX-512 CPU has).
var HasMaxPoolRun = cpu.X86.HasAVX512F && cpu.X86.HasBMI2

//go:noescape
func maxPoolRunAVX512(plane *int32, offsets *int32, n int, starts *[16]int32, mask uint16, y, idx *float32) (rare uint16)

// MaxPoolRun pools the windows of the lanes set in mask, which lie wholly
// inside plane and whose outputs are y[j] and idx[j]: starts are their
// first positions and offsets the positions of a window's elements
// relative to its first, in row-major order. It returns the lanes it left
// to Caffe's loop (see maxPoolResult).
func MaxPoolRun(plane []int32, offsets []int32, starts *[16]int32, mask uint16, y, idx []float32) uint16 {
	return maxPoolRunAVX512(&plane[0], &offsets[0], len(offsets), starts, mask, &y[0], &idx[0])
}

//go:noescape
func maxPoolRowAVX512(plane *int32, offsets *int32, n int, start int, mask uint16, y, idx *float32) (rare uint16)

// MaxPoolRow is MaxPoolRun of windows one position apart, the first at
// start (starts[j] = start + j): their elements read with vector loads
// rather than gathered.
func MaxPoolRow(plane []int32, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	return maxPoolRowAVX512(&plane[0], &offsets[0], len(offsets), int(start), mask, &y[0], &idx[0])
}

//go:noescape
func maxPoolRow2AVX512(plane *int32, offsets *int32, n int, start int, mask uint16, y, idx *float32) (rare uint16)

// MaxPoolRow2 is MaxPoolRun of windows two positions apart, the first at
// start (starts[j] = start + 2j): their elements read with vector loads
// rather than gathered.
func MaxPoolRow2(plane []int32, offsets []int32, start int32, mask uint16, y, idx []float32) uint16 {
	return maxPoolRow2AVX512(&plane[0], &offsets[0], len(offsets), int(start), mask, &y[0], &idx[0])
}
