package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// GemmEpilogue is Gemm followed by the epilogue, on every path: packed
// tiles (the epilogue on the last block of k), split over goroutines,
// matrix-vector shapes (one row or column of C), all transpositions.
func TestGemmEpilogueIsGemmThenEpilogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, sh := range [][3]int{{1, 2000, 1100}, {1500, 1, 1500}, {1, 1000, 300}, {1, 7, 5}, {37, 1, 200}, {64, 1, 9}, {5, 6, 7}, {70, 300, 600}, {130, 90, 40}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, mode := range []string{"row+relu", "col+leaky", "row+col", "none"} {
					t.Run(fmt.Sprintf("%dx%dx%d/%v%v/%s", m, n, k, ta, tb, mode), func(t *testing.T) {
						a, b, c0 := fill(m*k), fill(k*n), fill(m*n)
						ep := &Epilogue[float32]{}
						switch mode {
						case "row+relu":
							ep.RowBias, ep.ReLU = fill(m), true
						case "col+leaky":
							ep.ColBias, ep.ReLU, ep.Slope = fill(n), true, 0.1
						case "row+col":
							ep.RowBias, ep.ColBias = fill(m), fill(n)
						}
						want := append([]float32(nil), c0...)
						Gemm(ta, tb, m, n, k, 0.5, a, b, 0.25, want)
						for i := range m {
							for j := range n {
								v := want[i*n+j]
								if ep.RowBias != nil {
									v += ep.RowBias[i]
								}
								if ep.ColBias != nil {
									v += ep.ColBias[j]
								}
								if ep.ReLU && v < 0 {
									v *= ep.Slope
								}
								want[i*n+j] = v
							}
						}
						got := append([]float32(nil), c0...)
						GemmEpilogue(ta, tb, m, n, k, 0.5, a, b, 0.25, got, ep)
						for i := range got {
							if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
								t.Fatalf("C[%d] = %g, want %g", i, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}

// GemmPackedEpilogue with A packed once (several blocks of rows and of
// k, transposed or not, on one goroutine or several) gives what
// GemmEpilogue gives.
func TestGemmPackedEpilogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	// 500x49, 1024x49 and 126x100: few columns, split by rows, the parts' rows
	// across the packed blocks of gemmMC rows.
	for _, sh := range [][3]int{{500, 49, 400}, {64, 3136, 32}, {1, 300, 20}, {30, 1, 50}, {250, 20, 7}, {13, 200, 900}, {600, 20, 500}, {1024, 49, 300}, {126, 100, 700}, {50, 25, 2304}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, serial := range []bool{false, true} {
					t.Run(fmt.Sprintf("%dx%dx%d/%v%v/serial=%v", m, n, k, ta, tb, serial), func(t *testing.T) {
						a, b := fill(m*k), fill(k*n)
						ep := &Epilogue[float32]{RowBias: fill(m), ReLU: true}
						want, got := fill(m*n), fill(m*n)
						GemmEpilogue(ta, tb, m, n, k, 1, a, b, 0, want, ep)
						GemmPackedEpilogue(PackA(ta, m, k, a), tb, n, b, got, ep, serial)
						for i := range got {
							if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
								t.Fatalf("C[%d] = %g, want %g", i, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}

// The vector epilogue (where this CPU has one) gives the Go loop's
// results bit for bit, NaNs, infinities and signed zeros included, at
// every row length around its vector widths and at offsets into C.
func TestEpilogueVectorIsGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40, -1e-40}
	const ldc = 45
	for _, relu := range []bool{false, true} {
		for _, withBias := range []bool{false, true} {
			for cols := 1; cols <= 40; cols++ {
				for _, i0 := range []int{0, 3} {
					c := make([]float32, 9*ldc)
					for i := range c {
						if rng.IntN(4) == 0 {
							c[i] = special[rng.IntN(len(special))]
						} else {
							c[i] = float32(rng.NormFloat64())
						}
					}
					var bias []float32
					if withBias {
						bias = make([]float32, 9)
						for i := range bias {
							bias[i] = float32(rng.NormFloat64())
						}
						bias[4] = float32(math.Copysign(0, -1))
					}
					ep := &Epilogue[float32]{RowBias: bias, ReLU: relu}
					want := append([]float32(nil), c...)
					ep.applyGo(want, ldc, i0, 9, 2, 2+cols)
					ep.apply(c, ldc, i0, 9, 2, 2+cols)
					for i := range c {
						g, w := c[i], want[i]
						if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
							t.Fatalf("relu %v, bias %v, cols %d, rows %d..9: c[%d] = %g (%#x), want %g (%#x)", relu, withBias, cols, i0, i, g, math.Float32bits(g), w, math.Float32bits(w))
						}
					}
				}
			}
		}
	}
}
