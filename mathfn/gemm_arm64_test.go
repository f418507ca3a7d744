//go:build arm64 && !purego

package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNEONKernels holds each NEON micro-kernel (whole tiles and those of
// fewer rows) to the definition, C[r][q] += sum over p of A~[p][r] *
// B~[p][q], computed in float64: every k around the unrolling by 4 and
// the block size, C a window of a wider matrix whose other elements must
// stay as they were, and infinities and NaNs in the panels, which must
// come out where the definition has them.
func TestNEONKernels(t *testing.T) {
	if !neon {
		t.Skip("no NEON on this CPU")
	}
	testNEONKernels(t, archSgemmKernels()[0], 1e-6)
	testNEONKernels(t, archDgemmKernels()[0], 1e-14)
}

func testNEONKernels[T Float](t *testing.T, kern microKernel[T], tol float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	mr, nr := kern.mr, kern.nr
	for rows := 1; rows <= mr; rows++ {
		fn := kern.fn
		if rows < mr {
			fn = kern.rows[rows]
		}
		for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 191, 192, 193} {
			for _, special := range []bool{false, true} {
				name := fmt.Sprintf("%T %s rows %d k %d specials %v", T(0), kern.name, rows, k, special)
				a, b := randT[T](rng, mr*k), randT[T](rng, nr*k)
				if special && k > 0 {
					// An infinity in a row of A~ and a NaN in a column of
					// B~; an infinity times a zero.
					a[rng.IntN(k)*mr+rng.IntN(rows)] = T(math.Inf(1))
					b[rng.IntN(k)*nr+rng.IntN(nr)] = T(math.NaN())
					p := rng.IntN(k)
					a[p*mr+rng.IntN(rows)] = T(math.Inf(-1))
					b[p*nr+rng.IntN(nr)] = 0
				}
				ldc := nr + 3
				c := randT[T](rng, (mr+1)*ldc)
				before := append([]T(nil), c...)
				fn(k, a, b, c, ldc)
				for r := range mr + 1 {
					for q := range ldc {
						got := float64(c[r*ldc+q])
						if r >= rows || q >= nr {
							if math.Float64bits(got) != math.Float64bits(float64(before[r*ldc+q])) {
								t.Fatalf("%s: C[%d][%d] outside the tile changed", name, r, q)
							}
							continue
						}
						want := float64(before[r*ldc+q])
						for p := range k {
							want += float64(a[p*mr+r]) * float64(b[p*nr+q])
						}
						if math.IsNaN(want) != math.IsNaN(got) || (math.IsInf(want, 0) && got != want) ||
							math.Abs(got-want) > tol*(1+math.Abs(want))*math.Sqrt(float64(k+1)) {
							t.Fatalf("%s: C[%d][%d] = %v, want %v", name, r, q, got, want)
						}
					}
				}
			}
		}
	}
}

// TestNEONDotKernels holds the dot kernels to the definition: the 16 dot
// products of 4 rows of A and 4 of B over k (a multiple of the lanes), as
// vectors of partial sums whose lanes add up to them.
func TestNEONDotKernels(t *testing.T) {
	if !neon {
		t.Skip("no NEON on this CPU")
	}
	testNEONDot(t, archSgemmKernels()[0].dot, 1e-6)
	testNEONDot(t, archDgemmKernels()[0].dot, 1e-14)
}

func testNEONDot[T Float](t *testing.T, dk *dotKernel[T], tol float64) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, k := range []int{0, dk.lanes, 3 * dk.lanes, 128, 200} {
		lda, ldb := k+5, k+2
		a, b := randT[T](rng, 4*lda), randT[T](rng, 4*ldb)
		out := make([]T, 16*dk.lanes)
		for i := range out {
			out[i] = T(math.NaN()) // every lane must be written
		}
		dk.fn(k, a, lda, b, ldb, out)
		for r := range 4 {
			for q := range 4 {
				var got, want float64
				for _, v := range out[(r*4+q)*dk.lanes:][:dk.lanes] {
					got += float64(v)
				}
				for p := range k {
					want += float64(a[r*lda+p]) * float64(b[q*ldb+p])
				}
				if math.Abs(got-want) > tol*(1+math.Abs(want))*math.Sqrt(float64(k+1)) {
					t.Fatalf("%T k %d: A row %d . B row %d = %v, want %v", T(0), k, r, q, got, want)
				}
			}
		}
	}
}

// The kernels are chosen at run time: this CPU's best kernel is NEON's,
// and the plain Go one stays behind it.
func TestNEONChosen(t *testing.T) {
	if !neon {
		t.Skip("no NEON on this CPU")
	}
	if sgemmKernels[0].name != "NEON" || dgemmKernels[0].name != "NEON" {
		t.Errorf("kernels %s and %s, want NEON", sgemmKernels[0].name, dgemmKernels[0].name)
	}
	if last := sgemmKernels[len(sgemmKernels)-1].name; last != "Go" {
		t.Errorf("the last float32 kernel is %s, want Go", last)
	}
}
