//go:build amd64 && !purego

package mathfn

import (
	"fmt"
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSgemmPack holds the AVX-512 packing (in-register transposes of full
// panels, gathers for the rest) to its definition (checkPack).
func TestSgemmPack(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512 on this CPU")
	}
	checkPack(t, sgemmPack, []int{12, 32}, []int{1, 5}, []int{1, 15, 16, 17, 31, 48, 193})
}

// TestSgemmGatherAVX2 holds the AVX2 packing (in-register transposes of
// full panels, value by value for the rest) to its definition (checkPack).
func TestSgemmGatherAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("no AVX2 and FMA on this CPU")
	}
	checkPack(t, sgemmGatherAVX2, []int{6, 16}, []int{1, 5, 6, 7, 8, 9}, []int{1, 7, 8, 9, 15, 16, 17, 48, 193})
}

// checkPack holds pack to its definition: dst[p*width + r] =
// alpha*src[r*ld + p] for r < rows, zero for rows <= r < width, exactly
// (a product by alpha, no sums), for each width, the rows given (and
// width-1 and width) up to width, and each k.
func checkPack(t *testing.T, pack func(dst, src []float32, ld, k, rows, width int, alpha float32), widths, rowCounts, ks []int) {
	t.Helper()
	for _, width := range widths {
		for _, rows := range append(rowCounts, width-1, width) {
			if rows > width {
				continue
			}
			for _, k := range ks {
				for _, alpha := range []float32{1, -0.5} {
					ld := k + 3
					src := randSlice[float32]((rows-1)*ld+k, -1, 1, uint64(k*rows+width))
					dst := make([]float32, k*width)
					for i := range dst {
						dst[i] = 99 // every lane must be written
					}
					pack(dst, src, ld, k, rows, width, alpha)
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

// TestDotAVX2 holds the AVX2 dot kernels to a plain loop: every vector of
// partial sums written, each adding up to its dot product, over lengths
// of no, one, an odd and an even number of 8-value steps.
func TestDotAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("no AVX2 and FMA on this CPU")
	}
	checkDot(t, "AVX2", []int{0, 8, 16, 24, 40, 128, 136, 1000})
}

// TestDotAVX512 is TestDotAVX2 of the AVX-512 kernels (16-value steps;
// the one-row kernel takes 32 a round).
func TestDotAVX512(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512 on this CPU")
	}
	checkDot(t, "AVX-512", []int{0, 16, 32, 48, 80, 128, 144, 1008, 9216})
}

// checkDot holds the named kernel set's dot kernels, of its rows of A and
// of one row, to a plain loop over each k (multiples of the lanes).
func checkDot(t *testing.T, name string, ks []int) {
	t.Helper()
	var dk *dotKernel[float32]
	for _, k := range archSgemmKernels() {
		if k.name == name {
			dk = k.dot
		}
	}
	if dk == nil || dk.one == nil {
		t.Fatalf("%s: no dot kernels of several rows and one", name)
	}
	lanes := dk.lanes
	for _, rows := range []int{1, dk.aRows} {
		fn := dk.fn
		if rows == 1 {
			fn = dk.one
		}
		for _, k := range ks {
			lda, ldb := k+5, k+3
			a := randSlice[float32](rows*lda, -1, 1, uint64(k+rows))
			b := randSlice[float32](4*ldb, -1, 1, uint64(k+7))
			out := make([]float32, rows*4*lanes)
			for i := range out {
				out[i] = float32(math.NaN()) // every lane must be written
			}
			fn(k, a, lda, b, ldb, out)
			for r := range rows {
				for q := range 4 {
					var got, want float64
					for _, v := range out[(r*4+q)*lanes:][:lanes] {
						got += float64(v)
					}
					for p := range k {
						want += float64(a[r*lda+p]) * float64(b[q*ldb+p])
					}
					if math.Abs(got-want) > 1e-6*(1+math.Abs(want))*math.Sqrt(float64(k+1)) {
						t.Fatalf("%s rows %d k %d: A row %d . B row %d = %v, want %v", name, rows, k, r, q, got, want)
					}
				}
			}
		}
	}
}

// TestSgemmRowsAVX2 holds the AVX2 kernels of a 6-row panel's first rows,
// adding and storing, to the whole-tile kernels: the same bits in the rows
// they compute (the same products summed in the same order) and the rows
// below left alone, for every row count and k about the unrolling.
func TestSgemmRowsAVX2(t *testing.T) {
	var kern microKernel[float32]
	for _, k := range archSgemmKernels() {
		if k.name == "AVX2" {
			kern = k
		}
	}
	if kern.rows == nil || kern.setRows == nil {
		t.Skip("no AVX2 and FMA on this CPU")
	}
	const mr, nr, ldc = 6, 16, 19
	for rows := 1; rows < mr; rows++ {
		for _, k := range []int{1, 3, 4, 5, 8, 17, 192, 193} {
			for _, set := range []bool{false, true} {
				a := randSlice[float32](k*mr, -1, 1, uint64(k*7+rows))
				b := randSlice[float32](k*nr, -1, 1, uint64(k*5+rows))
				c0 := randSlice[float32](mr*ldc, -1, 1, uint64(k+rows))
				want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
				if set {
					kern.set(k, a, b, want, ldc)
					kern.setRows[rows](k, a, b, got, ldc)
				} else {
					kern.fn(k, a, b, want, ldc)
					kern.rows[rows](k, a, b, got, ldc)
				}
				for i := range mr {
					for j := range ldc {
						w := want[i*ldc+j]
						if i >= rows {
							w = c0[i*ldc+j]
						}
						if g := got[i*ldc+j]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("rows %d k %d set %v: C[%d][%d] = %v, want %v", rows, k, set, i, j, g, w)
						}
					}
				}
			}
		}
	}
}
