package mathfn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
)

// PackAScaled gives, on every path of GemmPackedEpilogue (the packed
// panels on one goroutine or split by columns, a C narrower than the
// cores' columns, matrix-vector shapes and dot kernels, which read A
// unpacked), bit for bit what PackA of the scaled copy gives; and it
// keeps A unpacked only once such a product has needed it.
func TestPackAScaledIsPackAOfScaledCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, sh := range [][3]int{{500, 49, 400}, {64, 3136, 32}, {250, 20, 7}, {13, 200, 900}, {300, 10, 300}, {600, 20, 500}, {30, 1, 50}, {1, 300, 20}, {3, 200, 300}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, serial := range []bool{false, true} {
				t.Run(fmt.Sprintf("%dx%dx%d/%v/serial=%v", m, n, k, tb, serial), func(t *testing.T) {
					a, b := fill(m*k), fill(k*n)
					scale := make([]float64, m)
					scaled := make([]float32, m*k)
					for i := range m {
						scale[i] = 0.3 + rng.Float64()
						for p := range k {
							scaled[i*k+p] = float32(float64(a[i*k+p]) * scale[i])
						}
					}
					ep := &Epilogue[float32]{RowBias: fill(m), ReLU: true}
					want, got := fill(m*n), fill(m*n)
					GemmPackedEpilogue(PackA(blas.NoTrans, m, k, scaled), tb, n, b, want, ep, serial)
					pa := PackAScaled(m, k, a, scale)
					GemmPackedEpilogue(pa, tb, n, b, got, ep, serial)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("C[%d] = %g, want %g", i, got[i], want[i])
						}
					}
					switch gemv := m == 1 || n == 1; {
					case gemv && !pa.OwnsUnpacked():
						t.Errorf("after a matrix-vector product A is not kept unpacked")
					case !gemv && m > dotRows && ownGemmFor[float32](settings.GEMMAuto) && pa.OwnsUnpacked():
						t.Errorf("a product on the panels left an unpacked A behind")
					}
					// What the unpacked products read is the scaled copy.
					ta, u, lda := pa.source()
					if ta != blas.NoTrans || lda != k || len(u) != len(scaled) {
						t.Fatalf("source: %v, %d values, lda %d; want NoTrans, %d, %d", ta, len(u), lda, len(scaled), k)
					}
					for i, v := range u {
						if math.Float32bits(v) != math.Float32bits(scaled[i]) {
							t.Fatalf("unpacked A[%d] = %g, want %g", i, v, scaled[i])
						}
					}
				})
			}
		}
	}
}

// PackAIn gives PackA's products bit for bit, reusing its PackedA and
// blocks across shapes and matrices, serial or not, and allocates nothing
// once it has seen the largest shape.
func TestPackAInIsPackA(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	var p *PackedA[float32]
	blocks := make([]float32, PackedASize[float32](600, 500))
	for _, sh := range [][3]int{{600, 20, 500}, {32, 256, 800}, {64, 49, 1000}, {7, 30, 5}, {250, 300, 200}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, serial := range []bool{false, true} {
				a, b := fill(m*k), fill(k*n)
				p = PackAIn(p, ta, m, k, a, blocks)
				got, want := make([]float32, m*n), make([]float32, m*n)
				GemmPackedEpilogue(p, blas.NoTrans, n, b, got, nil, serial)
				GemmPackedEpilogue(PackA(ta, m, k, a), blas.NoTrans, n, b, want, nil, serial)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%dx%dx%d %v serial %v: C[%d] = %v, want %v", m, n, k, ta, serial, i, got[i], want[i])
					}
				}
				if ta == blas.NoTrans && serial {
					// And Gemm's own products, which pack A as they go.
					GemmSerial(ta, blas.NoTrans, m, n, k, 1, a, b, 0, want)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%dx%dx%d: C[%d] = %v, GemmSerial's %v", m, n, k, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	a := fill(600 * 500)
	if n := testing.AllocsPerRun(5, func() { p = PackAIn(p, blas.NoTrans, 600, 500, a, blocks) }); n != 0 {
		t.Errorf("PackAIn allocates %v times", n)
	}
}

// PackConvFlippedIn packs, bit for bit, the panels PackAIn packs from the
// flipped weights written out: input counts below, at and past a panel's
// rows and a block's (gemmMC), steps across blocks of k, one tap and
// nine, and again into the same PackedA (its reuse between passes).
func TestPackConvFlippedInIsPackAInOfFlipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var p *PackedA[float32]
	for _, sh := range [][3]int{{5, 7, 9}, {12, 64, 9}, {64, 64, 9}, {250, 30, 9}, {13, 300, 1}, {512, 40, 9}, {3, 3, 25}} {
		cin, cout, taps := sh[0], sh[1], sh[2]
		w := make([]float32, cout*cin*taps)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		flipped := make([]float32, len(w))
		for co := range cout {
			for ci := range cin {
				for tp := range taps {
					flipped[(ci*cout+co)*taps+taps-1-tp] = w[(co*cin+ci)*taps+tp]
				}
			}
		}
		size := PackedASize[float32](cin, cout*taps)
		want := PackAIn(nil, blas.NoTrans, cin, cout*taps, flipped, make([]float32, size))
		blocks := make([]float32, size)
		for i := range blocks {
			blocks[i] = float32(math.NaN()) // every place written
		}
		p = PackConvFlippedIn(p, cin, cout, taps, w, blocks)
		for i, v := range p.blocks {
			if math.Float32bits(v) != math.Float32bits(want.blocks[i]) {
				t.Fatalf("%d inputs %d outputs %d taps: panels [%d] = %v, want %v", cin, cout, taps, i, v, want.blocks[i])
			}
		}
		if len(p.blocks) != len(want.blocks) {
			t.Fatalf("%d inputs %d outputs %d taps: %d panel values, want %d", cin, cout, taps, len(p.blocks), len(want.blocks))
		}
	}
}
