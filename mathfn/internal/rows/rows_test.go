package rows

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCopyAddAgainstGo holds Copy and Add (assembly where the CPU has it)
// to the Go loops on rows shorter and longer than a vector, with the
// elements around the rows left alone.
func TestCopyAddAgainstGo(t *testing.T) {
	testRows[float32](t)
	testRows[float64](t)
}

func testRows[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for _, rowCount := range []int{0, 1, 3} {
			dstStride, srcStride := n+rng.IntN(5), n+rng.IntN(7)
			src := make([]T, rowCount*srcStride+n+3)
			dst := make([]T, rowCount*dstStride+n+3)
			for i := range src {
				src[i] = T(rng.NormFloat64())
			}
			for i := range dst {
				dst[i] = T(rng.NormFloat64())
			}
			if !Fit(len(dst), n, rowCount, dstStride) || !Fit(len(src), n, rowCount, srcStride) || n == 0 || rowCount == 0 {
				continue
			}
			for _, op := range []struct {
				name      string
				fast, ref func(dst, src []T, n, rows, dstStride, srcStride int)
			}{{"Copy", Copy[T], copyGo[T]}, {"Add", Add[T], addGo[T]}} {
				want, got := slices.Clone(dst), slices.Clone(dst)
				op.ref(want, src, n, rowCount, dstStride, srcStride)
				op.fast(got, src, n, rowCount, dstStride, srcStride)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %T n=%d rows=%d strides %d,%d: %v, want %v", op.name, dst[0], n, rowCount, dstStride, srcStride, got, want)
				}
			}
		}
	}
}

// TestAVX2AgainstGo holds the AVX2 kernels to the Go loops on a CPU that
// has AVX2, whether or not Copy and Add choose them (they prefer AVX-512).
func TestAVX2AgainstGo(t *testing.T) {
	if !hasAVX2() {
		t.Skip("no AVX2 on this CPU")
	}
	defer func(avx512 bool) { setAVX512(avx512) }(setAVX512(false))
	testRows[float32](t)
	testRows[float64](t)
}

// TestCopy2AgainstGo holds Copy2 to its Go loop on rows shorter and
// longer than a vector, the source rows ending at the last element read
// (no read past it may fault or matter), the elements around the
// destination's rows left alone.
func TestCopy2AgainstGo(t *testing.T) {
	testCopy2[float32](t)
	testCopy2[float64](t)
}

func testCopy2[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 40; n++ {
		for _, rowCount := range []int{1, 2, 5} {
			srcStride, dstStride := 2*n+rng.IntN(4), n+rng.IntN(3)
			src := make([]T, (rowCount-1)*srcStride+2*n-1)
			dst := make([]T, (rowCount-1)*dstStride+n+2)
			for i := range src {
				src[i] = T(rng.NormFloat64())
			}
			for i := range dst {
				dst[i] = T(rng.NormFloat64())
			}
			want, got := slices.Clone(dst), slices.Clone(dst)
			copy2Go(want, src, n, rowCount, dstStride, srcStride)
			Copy2(got, src, n, rowCount, dstStride, srcStride)
			if !slices.Equal(got, want) {
				t.Fatalf("%T n=%d rows=%d strides %d,%d: %v, want %v", dst[0], n, rowCount, dstStride, srcStride, got, want)
			}
		}
	}
}

// TestCopyStridedAgainstGo holds CopyStrided to its Go loop at steps 1 to
// 5, rows shorter and longer than a vector, the source rows ending at the
// last element read.
func TestCopyStridedAgainstGo(t *testing.T) {
	testCopyStrided[float32](t)
	testCopyStrided[float64](t)
}

func testCopyStrided[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for step := 1; step <= 5; step++ {
		for n := 1; n < 30; n++ {
			for _, rowCount := range []int{1, 3} {
				srcStride, dstStride := step*(n-1)+1+rng.IntN(4), n+rng.IntN(3)
				src := make([]T, (rowCount-1)*srcStride+step*(n-1)+1)
				dst := make([]T, (rowCount-1)*dstStride+n+2)
				for i := range src {
					src[i] = T(rng.NormFloat64())
				}
				for i := range dst {
					dst[i] = T(rng.NormFloat64())
				}
				want, got := slices.Clone(dst), slices.Clone(dst)
				copyStridedGo(want, src, n, rowCount, dstStride, srcStride, step)
				CopyStrided(got, src, n, rowCount, dstStride, srcStride, step)
				if !slices.Equal(got, want) {
					t.Fatalf("%T step %d n=%d rows=%d strides %d,%d: %v, want %v", dst[0], step, n, rowCount, dstStride, srcStride, got, want)
				}
			}
		}
	}
}

func TestCopyOffsetsAgainstGo(t *testing.T) {
	testCopyOffsets[float32](t)
	testCopyOffsets[float64](t)
	if hasAVX2() { // and the AVX2 kernel where AVX-512 would take them
		defer func(avx512 bool) { setAVX512(avx512) }(setAVX512(false))
		testCopyOffsets[float32](t)
	}
}

func testCopyOffsets[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 1; n < 40; n++ {
		for _, rowCount := range []int{1, 2, 7} {
			src := make([]T, 200)
			for i := range src {
				src[i] = T(rng.NormFloat64())
			}
			offs := make([]int32, rowCount)
			for r := range offs {
				offs[r] = int32(rng.IntN(len(src) - n + 1))
			}
			dstStride := n + rng.IntN(5)
			dst := make([]T, (rowCount-1)*dstStride+n+3)
			for i := range dst {
				dst[i] = T(rng.NormFloat64())
			}
			want, got := slices.Clone(dst), slices.Clone(dst)
			for r, off := range offs {
				copy(want[r*dstStride:r*dstStride+n], src[off:int(off)+n])
			}
			CopyOffsets(got, src, n, dstStride, offs)
			if !slices.Equal(got, want) {
				t.Fatalf("%T n=%d rows=%d stride %d: %v, want %v", dst[0], n, rowCount, dstStride, got, want)
			}
		}
	}
}
