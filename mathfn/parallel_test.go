package mathfn

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// TestParallelPartsOnce checks that Parallel calls body once per part,
// with Parallel's ranges, and ParallelChunks each index once with a part
// below Parts(n), on 1 to 4 goroutines.
func TestParallelPartsOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
			var mu sync.Mutex
			var got [][3]int
			body := func(part, lo, hi int) {
				mu.Lock()
				got = append(got, [3]int{part, lo, hi})
				mu.Unlock()
			}
			for round := range 20 { // repeated: helpers start at different times
				got = got[:0]
				Parallel(n, body)
				parts := Parts(n)
				var want [][3]int
				if n > 0 {
					for p := range parts {
						want = append(want, [3]int{p, p * n / parts, (p + 1) * n / parts})
					}
				}
				slices.SortFunc(got, func(a, b [3]int) int { return a[0] - b[0] })
				if !slices.Equal(got, want) {
					t.Fatalf("GOMAXPROCS %d, n %d, round %d: Parallel's parts %v, want %v", procs, n, round, got, want)
				}
				got = got[:0]
				ParallelChunks(n, body)
				seen := make([]int, n)
				for _, g := range got {
					if g[0] < 0 || g[0] >= parts || g[1] >= g[2] {
						t.Fatalf("GOMAXPROCS %d, n %d: ParallelChunks called body%v", procs, n, g)
					}
					for i := g[1]; i < g[2]; i++ {
						seen[i]++
					}
				}
				for i, s := range seen {
					if s != 1 {
						t.Fatalf("GOMAXPROCS %d, n %d: ParallelChunks computed index %d %d times", procs, n, i, s)
					}
				}
			}
		}
	}
}

// TestParallelAfterHelpersPark checks regions far enough apart that the
// helpers have stopped polling and parked between them.
func TestParallelAfterHelpersPark(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	for round := range 5 {
		time.Sleep(2 * helperSpin)
		sum := make([]int, 50)
		ParallelChunks(50, func(part, lo, hi int) {
			for i := lo; i < hi; i++ {
				sum[i]++
			}
		})
		for i, s := range sum {
			if s != 1 {
				t.Fatalf("round %d: index %d computed %d times", round, i, s)
			}
		}
	}
}

// TestParallelWithBusyHelpers checks that a region whose helpers are all
// busy (a region of another goroutine holding them) is computed by its
// own goroutine: nothing waits for a helper to be free.
func TestParallelWithBusyHelpers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(4)
	release := make(chan struct{})
	started := make(chan struct{}, 64)
	hold := func(part, lo, hi int) {
		started <- struct{}{}
		<-release
	}
	// Regions of other goroutines take every helper and keep them.
	var wg sync.WaitGroup
	for range 2 * max(runtime.NumCPU(), 2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Parallel(4, hold)
		}()
	}
	// Each such region holds its caller and up to 3 helpers; wait until
	// the pool's helpers are all in hold (or the regions' callers are).
	for range 2 * max(runtime.NumCPU(), 2) {
		<-started
	}
	sum := make([]int, 100)
	ParallelChunks(100, func(part, lo, hi int) {
		for i := lo; i < hi; i++ {
			sum[i]++
		}
	})
	close(release)
	wg.Wait()
	for i, s := range sum {
		if s != 1 {
			t.Fatalf("index %d computed %d times", i, s)
		}
	}
}

// TestGemmChunksMatchSerial checks that a product split into chunks (by
// columns, by rows with B packed whole per goroutine, by rows packing per
// chunk) gives bit for bit what one goroutine gives, with A packed once
// and not, at shapes on and off the kernel's tile edges.
func TestGemmChunksMatchSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, s := range []struct{ m, n, k int }{
			{64, 784, 192},   // by columns
			{256, 49, 832},   // by rows, B whole (k over several blocks)
			{16, 196, 480},   // few rows
			{61, 37, 200},    // rows and columns off the tiles
			{300, 20, 10000}, // by rows, B too long to pack whole
			{7, 3000, 5},     // short k
			{250, 250, 250},
		} {
			t.Run(fmt.Sprintf("%d/%dx%dx%d", procs, s.m, s.n, s.k), func(t *testing.T) {
				a := randSlice[float32](s.m*s.k, -1, 1, 1)
				b := randSlice[float32](s.k*s.n, -1, 1, 2)
				ep := &Epilogue[float32]{RowBias: randSlice[float32](s.m, -1, 1, 3), ReLU: true}
				pa := PackA(blas.NoTrans, s.m, s.k, a)
				want := make([]float32, s.m*s.n)
				GemmPackedEpilogue(pa, blas.NoTrans, s.n, b, want, ep, true)
				for round := range 5 {
					got := make([]float32, s.m*s.n)
					GemmPackedEpilogue(pa, blas.NoTrans, s.n, b, got, ep, false)
					if i := firstDiff(got, want); i >= 0 {
						t.Fatalf("packed, round %d: C[%d] = %v split, %v serial", round, i, got[i], want[i])
					}
				}
				// Unpacked A, beta 0 and 1: the products of gemmOn.
				cw := randSlice[float32](s.m*s.n, -1, 1, 4)
				cg := slices.Clone(cw)
				gemmOn(1, 0, blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, s.k, b, s.n, 1, cw, s.n)
				gemmOn(procs, 0, blas.NoTrans, blas.NoTrans, s.m, s.n, s.k, 1, a, s.k, b, s.n, 1, cg, s.n)
				if i := firstDiff(cg, cw); i >= 0 {
					t.Fatalf("unpacked: C[%d] = %v split, %v serial", i, cg[i], cw[i])
				}
			})
		}
	}
}

// firstDiff returns the first index where a and b differ, -1 for none.
func firstDiff(a, b []float32) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
