//go:build amd64 && !purego

package mathfn

import (
	"fmt"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSgemmPack holds the AVX-512 packing (in-register transposes of full
// panels, gathers for the rest) to its definition: dst[p*width + r] =
// alpha*src[r*ld + p] for r < rows, zero for rows <= r < width, exactly
// (a product by alpha, no sums).
func TestSgemmPack(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512 on this CPU")
	}
	for _, width := range []int{12, 32} {
		for _, rows := range []int{1, 5, width - 1, width} {
			for _, k := range []int{1, 15, 16, 17, 31, 48, 193} {
				for _, alpha := range []float32{1, -0.5} {
					ld := k + 3
					src := randSlice[float32]((rows-1)*ld+k, -1, 1, uint64(k*rows+width))
					dst := make([]float32, k*width)
					for i := range dst {
						dst[i] = 99 // every lane must be written
					}
					sgemmPack(dst, src, ld, k, rows, width, alpha)
					name := fmt.Sprintf("width %d rows %d k %d alpha %g", width, rows, k, alpha)
					for p := range k {
						for r := range width {
							want := float32(0)
							if r < rows {
								want = alpha * src[r*ld+p]
							}
							if got := dst[p*width+r]; got != want {
								t.Fatalf("%s: dst[step %d, row %d] = %g, want %g", name, p, r, got, want)
							}
						}
					}
				}
			}
		}
	}
}
