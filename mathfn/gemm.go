package mathfn

import (
	"runtime"
	"sync"

	"github.com/gocaffe/gocaffe/mathfn/internal/rows"

	"github.com/gocaffe/gocaffe/settings"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// The default build's GEMM: C = alpha*op(A)*op(B) + beta*C, row-major, in
// the BLIS manner. op(B) is cut into blocks of kc x nc and op(A) into
// blocks of mc x kc; each block is packed into panels (B~ of nr columns,
// A~ of mr rows, alpha folded into A~) laid out in the order a
// micro-kernel reads them, and the micro-kernel multiplies one A~ panel by
// one B~ panel into an mr x nr tile of C held in registers. The B~ panel
// stays in the L1 cache while the A~ panels of a block pass over it, the
// A~ block in L2, the B~ block in L3. The kernels are Go assembly chosen by
// CPU feature (gemm_amd64.go: AVX-512, AVX2; gemm_arm64.go: NEON); a plain
// Go kernel serves other CPUs and the purego tag.
// Large products are split over GOMAXPROCS goroutines by columns of C (by
// rows when C is narrow), each packing its own panels.
//
// The amd64 assembly kernels run with flush-to-zero and denormals-are-zero
// set (and the caller's floating-point mode restored when they return):
// values below the smallest normal float count as 0 there. Training
// produces such values (vanishing gradients), and each one costs a
// microcode assist of about a hundred cycles; results differ from IEEE
// gradual underflow only below 1.2e-38 (float32) or 2.2e-308 (float64).
// The arm64 kernels leave the FPCR alone and keep gradual underflow, as
// the Go loops do: whether subnormals cost an arm64 core time has not been
// measured (no arm64 hardware here), and without a measurement the IEEE
// results are the safer default.

// microKernel is a register-blocked kernel of mr x nr tiles.
type microKernel[T Float] struct {
	name   string
	mr, nr int
	// fn adds the product of k steps of the packed panels a (mr per step)
	// and b (nr per step) to the tile at c, whose rows are ldc apart.
	fn func(k int, a, b, c []T, ldc int)
	// gather, if not nil, packs strided panels: for each of k steps, the
	// values src[r*ld + step] of rows rows, times alpha, into width
	// places of dst (zero past rows): A~ panels of row-major A, B~ panels
	// of B stored transposed.
	gather func(dst, src []T, ld, k, rows, width int, alpha T)
	// dot, if not nil, serves products of few rows by a transposed B.
	dot *dotKernel[T]
	// rows, if not nil, holds kernels of fewer rows than mr, by number
	// (nil at 0): fn's product for the first rows of the panels, written
	// to C directly.
	rows []func(k int, a, b, c []T, ldc int)
	// set, if not nil, is fn storing the tile to C instead of adding it:
	// the first block of k of a product with beta 0, whose C is then
	// neither cleared first nor read (gemmJob.overwrite).
	set func(k int, a, b, c []T, ldc int)
	// tiles and setTiles, if not nil, are fn and set over n full tiles in
	// a row, each reading A~, B~ and C aStep, bStep and cStep elements past
	// the one before: a strip of a macro-block in one call.
	tiles, setTiles func(k int, a, b, c []T, ldc, n, aStep, bStep, cStep int)
	// half, if not nil, is fn for the first nr/2 columns of the B~
	// panel alone: a tile of nr/2 columns or fewer (a product's last)
	// at about half the cost of a whole one.
	half func(k int, a, b, c []T, ldc int)
	// setRows, if not nil, is rows storing to C instead of adding (set's
	// kernels of fewer rows).
	setRows []func(k int, a, b, c []T, ldc int)
}

// dotKernel computes the aRows*4 dot products of aRows rows of A and 4
// rows of B, both read along their rows in place, over k (a multiple of
// lanes), as aRows*4 vectors of lanes partial sums in out (A's row i and
// B's row j at out[(i*4+j)*lanes]).
type dotKernel[T Float] struct {
	lanes, aRows int
	fn           func(k int, a []T, lda int, b []T, ldb int, out []T)
	// one, if not nil, is fn for a single row of A (a matrix-vector
	// product), its 4 vectors at the start of out.
	one func(k int, a []T, lda int, b []T, ldb int, out []T)
}

// dotRows is the most rows of op(A) for which C = op(A) * B^T runs on dot
// kernels: up to it, packing B costs more than the products (B is read
// once, for few rows); and the least k for which it pays.
const (
	dotRows = 16
	dotMinK = 128
)

// The kernels by preference: this CPU's assembly ones (gemm_amd64.go,
// gemm_arm64.go), then the plain Go one.
var (
	sgemmKernels = append(archSgemmKernels(), microKernel[float32]{"Go", 4, 8, goKernel[float32](4, 8), nil, nil, nil, nil, nil, nil, nil, nil})
	dgemmKernels = append(archDgemmKernels(), microKernel[float64]{"Go", 4, 4, goKernel[float64](4, 4), nil, nil, nil, nil, nil, nil, nil, nil})
)

// Block sizes, in elements. kc x nr of B~ (24 KB for float32 at nr 32) sits
// in a 48 KB L1; mc x kc of A~ (180 KB) in L2; kc x nc of B~ in L3.
const (
	gemmKC = 192
	gemmMC = 240 // a multiple of every mr (4, 6, 8, 12)
	gemmNC = 3072
)

// gemmParallelFlops is the size (2mnk) under which a product runs on the
// calling goroutine alone: below it, handing work to others costs more
// than it saves.
const gemmParallelFlops = 1 << 21

// kernelOf returns the best kernel for T on this CPU.
func kernelOf[T Float]() microKernel[T] {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return any(dgemmKernels[0]).(microKernel[T])
	}
	return any(sgemmKernels[0]).(microKernel[T])
}

// gemmBuffers are one worker's packing buffers.
type gemmBuffers[T Float] struct {
	a, b, tile, dot, pad []T
}

// freeList keeps objects for reuse, as a sync.Pool would, except that the
// garbage collector never empties it (a sync.Pool is emptied at each
// collection, and the next product would allocate megabytes of packing
// buffers again): it holds as many objects as were ever in use at once,
// for the life of the process.
type freeList[E any] struct {
	mu   sync.Mutex
	free []*E
}

func (l *freeList[E]) get() *E {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		e := l.free[n-1]
		l.free = l.free[:n-1]
		return e
	}
	return new(E)
}

func (l *freeList[E]) put(e *E) {
	l.mu.Lock()
	l.free = append(l.free, e)
	l.mu.Unlock()
}

var (
	sgemmBufs freeList[gemmBuffers[float32]]
	dgemmBufs freeList[gemmBuffers[float64]]
	sgemmJobs freeList[gemmJob[float32]]
	dgemmJobs freeList[gemmJob[float64]]
	forJobs   freeList[forJob]
)

// listOf returns T's list among a float32 and a float64 one.
func listOf[T Float, E32, E64, E any](l32 *freeList[E32], l64 *freeList[E64]) *freeList[E] {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return any(l64).(*freeList[E])
	}
	return any(l32).(*freeList[E])
}

func getBuffers[T Float](k microKernel[T]) *gemmBuffers[T] {
	b := listOf[T, gemmBuffers[float32], gemmBuffers[float64], gemmBuffers[T]](&sgemmBufs, &dgemmBufs).get()
	if len(b.a) < gemmMC*gemmKC {
		b.a = make([]T, gemmMC*gemmKC)
	}
	if nb := gemmKC * (gemmNC + k.nr); len(b.b) < nb {
		b.b = make([]T, nb)
	}
	if len(b.tile) < k.mr*k.nr {
		b.tile = make([]T, k.mr*k.nr)
	}
	if len(b.dot) < 16*16 {
		b.dot = make([]T, 16*16)
	}
	return b
}

func putBuffers[T Float](b *gemmBuffers[T]) {
	listOf[T, gemmBuffers[float32], gemmBuffers[float64], gemmBuffers[T]](&sgemmBufs, &dgemmBufs).put(b)
}

// gemmJob is one product, shared by the goroutines that compute it.
type gemmJob[T Float] struct {
	transA, transB bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	c              []T
	ldc            int
	kern           microKernel[T]
	// own is false where the linked BLAS computes the product
	// (gemm_choice.go).
	own bool
	// ep, if not nil, is applied to C once the product is complete
	// (gemm_epilogue.go).
	ep *Epilogue[T]
	// packed, if not nil, is A packed (gemm_packed.go), read instead of
	// a by every part.
	packed *PackedA[T]
	// overwrite: C is not cleared before the product (beta 0): the first
	// block of k stores its tiles (kern.set) instead of adding them.
	overwrite bool
	// panels, if not nil, packs B~ instead of b (gemm_conv.go): the
	// columns, or with panelTaps their transpose.
	panels    *ConvPanels[T]
	panelTaps bool

	// The split over goroutines (parallel): units units of unit columns
	// (byCols) or rows, in the region's chunks; wholeB: split by rows,
	// each goroutine packs all of B once, for all its chunks.
	units, unit int
	byCols      bool
	wholeB      bool
	region      region
}

// free returns the job to T's list, holding no caller's memory.
func (j *gemmJob[T]) free() {
	j.a, j.b, j.c, j.ep, j.packed, j.panels = nil, nil, nil, nil, nil, nil
	listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs).put(j)
}

// gemm computes C = alpha*op(A)*op(B) + beta*C (m x n, row stride ldc),
// on several goroutines when it is large, with GEMMAuto's code.
func gemm[T Float](transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmOn(runtime.GOMAXPROCS(0), settings.GEMMAuto, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmOn is gemm on at most workers goroutines, with the code choice
// chooses (gemm_choice.go).
func gemmOn[T Float](workers int, choice settings.GEMM, transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmEpOn(workers, choice, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// gemmEpOn is gemmOn followed by the epilogue ep (nil for none).
func gemmEpOn[T Float](workers int, choice settings.GEMM, transA, transB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ep *Epilogue[T]) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		ep.apply(c, ldc, 0, m, 0, n)
		return
	}
	if ep != nil && gemvShaped[T](choice, transA, transB, m, n, k) {
		scaleC(m, n, beta, c, ldc)
		gemvProduct(workers, transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
		ep.apply(c, ldc, 0, m, 0, n)
		return
	}
	j := listOf[T, gemmJob[float32], gemmJob[float64], gemmJob[T]](&sgemmJobs, &dgemmJobs).get()
	wake := j.region.wake // kept: a job from the list makes no channel again
	*j = gemmJob[T]{transA: transA != blas.NoTrans, transB: transB != blas.NoTrans, m: m, n: n, k: k,
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, kern: kernelOf[T](), own: ownGemmFor[T](choice), ep: ep}
	j.region.wake = wake
	j.setOverwrite(beta)
	if 2*float64(m)*float64(n)*float64(k) < gemmParallelFlops || workers <= 1 {
		j.run(0, m, 0, n)
		j.free()
		return
	}
	j.parallel(workers) // frees j
}

// setOverwrite sets j.overwrite where the product is C = op(A)*op(B)
// (beta 0) on packed panels with a kernel that stores, and scales C by
// beta otherwise.
func (j *gemmJob[T]) setOverwrite(beta T) {
	j.overwrite = beta == 0 && j.own && j.kern.set != nil && !j.useDot()
	if !j.overwrite {
		scaleC(j.m, j.n, beta, j.c, j.ldc)
	}
}

// scaleC sets C = beta*C, never reading C when beta is 0 (BLAS: C may
// then hold NaNs).
func scaleC[T Float](m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// parallel splits the product over workers goroutines: by columns of C in
// multiples of nr when C is wide enough, else by rows in multiples of mr,
// in chunks that the goroutines claim (parallel.go). It frees j.
func (j *gemmJob[T]) parallel(workers int) {
	nr, mr := j.kern.nr, j.kern.mr
	j.byCols = j.n >= j.m || j.n >= workers*nr*4
	if j.packed != nil {
		// Every part reads the packed A, whole or a range of its rows.
		// Few columns split unevenly in whole tiles of nr (49 columns on
		// two cores: 32 and 17, a full tile against a column), and a
		// packed A needs no packing per part: split those by rows.
		j.byCols = j.n >= workers*nr*4 || j.n >= workers*nr && j.m < workers*mr*4
	}
	j.unit, j.units = nr, j.n
	if !j.byCols {
		j.unit, j.units = mr, j.m
	}
	j.units = (j.units + j.unit - 1) / j.unit
	// Split by rows, every chunk multiplies all of B: each goroutine
	// packs it once where its panels fit one buffer (few columns, the
	// products that split by rows), not once per chunk.
	j.wholeB = !j.byCols && j.own && !j.useDot() && j.n <= gemmNC &&
		j.k*((j.n+nr-1)/nr*nr) <= gemmKC*(gemmNC+nr)
	// Several chunks per goroutine where a chunk packs nothing another
	// packs too: by columns with A packed once (each chunk packs its own
	// columns of B) or on the dot kernels (which pack nothing: a batch-1
	// inner product, whose helper, late on a busy core, would leave half
	// the weights unread until it starts), by rows with B packed whole.
	// Otherwise (A packed per chunk, or B) one per goroutine, claimed all
	// the same.
	chunks := workers
	if j.byCols && (j.packed != nil || j.useDot()) || j.wholeB {
		chunks = workers * gemmChunksPerWorker
	}
	chunks = min(chunks, j.units)
	j.region.start(chunks)
	runRegion(j, min(workers, chunks)-1)
}

// gemmChunksPerWorker is how many chunks parallel cuts a product into per
// goroutine where chunks duplicate no packing.
const gemmChunksPerWorker = 4

func (j *gemmJob[T]) reg() *region { return &j.region }

// work computes the chunks the goroutine claims (regionJob).
func (j *gemmJob[T]) work(_ int, helper bool) bool {
	var buf *gemmBuffers[T] // the whole B, packed at the first chunk
	last := false
	for {
		c, ok := j.region.claim()
		if !ok {
			break
		}
		total := j.n
		if !j.byCols {
			total = j.m
		}
		chunks := j.region.chunks
		lo := c * j.units / chunks * j.unit
		hi := min((c+1)*j.units/chunks*j.unit, total)
		switch {
		case j.byCols:
			j.run(0, j.m, lo, hi)
		case j.wholeB:
			if buf == nil {
				buf = getBuffers(j.kern)
				j.packWholeB(buf.b)
			}
			j.rowsOnWholeB(buf, lo, hi)
		default:
			j.run(lo, hi, 0, j.n)
		}
		if j.region.finish(helper) {
			last = true
		}
	}
	if buf != nil {
		putBuffers(buf)
	}
	return last
}

// leave ends a goroutine's hold on the job (regionJob).
func (j *gemmJob[T]) leave() {
	if j.region.leave() {
		j.free()
	}
}

// packWholeB packs all of op(B) into dst, block pc (of gemmKC steps) at
// pc times the columns rounded up to panels.
func (j *gemmJob[T]) packWholeB(dst []T) {
	npad := (j.n + j.kern.nr - 1) / j.kern.nr * j.kern.nr
	for pc := 0; pc < j.k; pc += gemmKC {
		j.packB(dst[pc*npad:], pc, min(gemmKC, j.k-pc), 0, j.n)
	}
}

// rowsOnWholeB computes rows [i0, i1) of C, all columns, from B packed
// whole in buf.b (packWholeB).
func (j *gemmJob[T]) rowsOnWholeB(buf *gemmBuffers[T], i0, i1 int) {
	npad := (j.n + j.kern.nr - 1) / j.kern.nr * j.kern.nr
	whole := buf.b
	for pc := 0; pc < j.k; pc += gemmKC {
		buf.b = whole[pc*npad:]
		j.rowBlocks(buf, i0, i1, 0, j.n, pc, min(gemmKC, j.k-pc))
	}
	buf.b = whole
}

// run computes rows [i0, i1) and columns [j0, j1) of C.
func (j *gemmJob[T]) run(i0, i1, j0, j1 int) {
	if !j.own {
		j.runBLAS(i0, i1, j0, j1)
		j.ep.apply(j.c, j.ldc, i0, i1, j0, j1)
		return
	}
	if j.useDot() {
		j.runDot(i0, i1, j0, j1)
		j.ep.apply(j.c, j.ldc, i0, i1, j0, j1)
		return
	}
	kern := j.kern
	buf := getBuffers(kern)
	defer putBuffers(buf)
	for jc := j0; jc < j1; jc += gemmNC {
		nc := min(gemmNC, j1-jc)
		for pc := 0; pc < j.k; pc += gemmKC {
			kc := min(gemmKC, j.k-pc)
			j.packB(buf.b, pc, kc, jc, nc)
			j.rowBlocks(buf, i0, i1, jc, nc, pc, kc)
		}
	}
}

// rowBlocks computes rows [i0, i1) of C's columns [jc, jc+nc) over steps
// [pc, pc+kc), B~'s block packed in buf.b.
func (j *gemmJob[T]) rowBlocks(buf *gemmBuffers[T], i0, i1, jc, nc, pc, kc int) {
	for ic := i0; ic < i1; {
		mc := min(gemmMC, i1-ic)
		var ep *Epilogue[T] // on the last block of k alone
		if pc+kc == j.k {
			ep = j.ep
		}
		set := pc == 0 && j.overwrite
		if j.packed != nil {
			// The packed panels of these rows, whole or a part
			// split by rows (i0 is then a multiple of mr, a
			// panel's start): up to the end of their block.
			start := ic / gemmMC * gemmMC
			mc = min(start+gemmMC, i1) - ic
			own := buf.a
			buf.a = j.packed.block(start, pc)[(ic-start)*kc:]
			j.macro(buf, ic, mc, jc, nc, kc, set, ep)
			buf.a = own
			ic += mc
			continue
		}
		j.packA(buf.a, ic, mc, pc, kc)
		j.macro(buf, ic, mc, jc, nc, kc, set, ep)
		ic += mc
	}
}

// runBLAS computes rows [i0, i1) and columns [j0, j1) of C with the
// linked BLAS (the openblas build, which keeps OpenBLAS to one thread and
// spreads products over goroutines itself, as everywhere else: no
// OpenBLAS threads fighting the goroutines that call it).
func (j *gemmJob[T]) runBLAS(i0, i1, j0, j1 int) {
	// The first row of op(A) and column of op(B) of the part: where it
	// starts in memory depends on the transposes (an offset of the other
	// layout can run past the end of the slice).
	a, b := j.a[i0:], j.b[j0:]
	if !j.transA {
		a = j.a[i0*j.lda:]
	}
	if j.transB {
		b = j.b[j0*j.ldb:]
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if j.transA {
		ta = blas.Trans
	}
	if j.transB {
		tb = blas.Trans
	}
	m, n := i1-i0, j1-j0
	c := j.c[i0*j.ldc+j0:]
	lda, ldb := max(j.lda, 1), max(j.ldb, 1)
	switch c := any(c).(type) {
	case []float32:
		blas32.Implementation().Sgemm(ta, tb, m, n, j.k, float32(j.alpha), any(a).([]float32), lda,
			any(b).([]float32), ldb, 1, c, j.ldc)
	case []float64:
		blas64.Implementation().Dgemm(ta, tb, m, n, j.k, float64(j.alpha), any(a).([]float64), lda,
			any(b).([]float64), ldb, 1, c, j.ldc)
	}
}

// useDot reports whether the product runs on dot kernels: few rows of A
// by a transposed B of at least 4 rows, k long enough.
func (j *gemmJob[T]) useDot() bool {
	return j.kern.dot != nil && !j.transA && j.transB && j.m <= dotRows && j.n >= 4 && j.k >= dotMinK
}

// runDot computes rows [i0, i1) and columns [j0, j1) of C += alpha *
// A * B^T with dot kernels: blocks of 4 rows of B (C's columns) against
// blocks of the kernel's rows of A; B's block stays in cache while A's
// blocks pass over it. A last block short of a kernel's rows starts
// earlier, overlapping the one before (whose results it does not write
// again); fewer rows of A in all than the kernel's are copied into
// zero-padded rows, but for a single row where the kernel has a kernel of
// one. The kernel covers k rounded down to its vector length, the rest of
// each dot product is added here.
func (j *gemmJob[T]) runDot(i0, i1, j0, j1 int) {
	buf := getBuffers(j.kern)
	defer putBuffers(buf)
	dk := j.kern.dot
	kv := j.k / dk.lanes * dk.lanes
	ar, fn := dk.aRows, dk.fn
	out := buf.dot[:ar*4*dk.lanes]
	a, lda := j.a, j.lda
	switch {
	case j.m == 1 && dk.one != nil:
		ar, fn = 1, dk.one
	case j.m < ar:
		buf.pad = grow(buf.pad, ar*j.k)
		clear(buf.pad)
		for r := range j.m {
			copy(buf.pad[r*j.k:(r+1)*j.k], j.a[r*j.lda:r*j.lda+j.k])
		}
		a, lda = buf.pad, j.k
	}
	for jb := j0; jb < j1; jb += 4 {
		jStart := min(jb, j.n-4) // a short last block starts earlier
		for ib := i0; ib < i1; ib += ar {
			iStart := max(min(ib, j.m-ar), 0)
			fn(kv, a[iStart*lda:], lda, j.b[jStart*j.ldb:], j.ldb, out)
			for r := max(ib, iStart); r < min(iStart+ar, i1); r++ {
				arow := j.a[r*j.lda : r*j.lda+j.k]
				for q := max(jb, jStart); q < min(jStart+4, j1); q++ {
					lanes := out[((r-iStart)*4+(q-jStart))*dk.lanes:][:dk.lanes]
					var sum T
					for _, v := range lanes {
						sum += v
					}
					br := j.b[q*j.ldb : q*j.ldb+j.k]
					for p := kv; p < j.k; p++ {
						sum += arow[p] * br[p]
					}
					j.c[r*j.ldc+q] += j.alpha * sum
				}
			}
		}
	}
}

// grow returns s with length n, reusing its array when it is big enough.
func grow[T Float](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// macro multiplies the packed mc x kc block of A~ by the kc x nc block of
// B~ into C, tile by tile: adding to C, or with set storing to it.
func (j *gemmJob[T]) macro(buf *gemmBuffers[T], ic, mc, jc, nc, kc int, set bool, ep *Epilogue[T]) {
	mr, nr := j.kern.mr, j.kern.nr
	if j.kern.tiles != nil {
		j.macroStrips(buf, ic, mc, jc, nc, kc, set, ep)
		return
	}
	if kc <= gemmShortK {
		// A short product (a rank-k update of C, like a fully connected
		// layer's weight gradient over a small batch) is all loads and
		// stores of C: walk C along its rows, tile after tile, so that
		// each row is one stream the prefetcher follows, instead of down
		// its columns, a page per row per tile.
		for ir := 0; ir < mc; ir += mr {
			for jr := 0; jr < nc; jr += nr {
				j.tile(buf, ic, ir, mc, jc, jr, nc, kc, set, ep)
			}
		}
		return
	}
	for jr := 0; jr < nc; jr += nr {
		for ir := 0; ir < mc; ir += mr {
			j.tile(buf, ic, ir, mc, jc, jr, nc, kc, set, ep)
		}
	}
}

// macroStrips is macro with the kernel's strips of tiles: each row of
// full tiles (short k, in macro's order) or column of them in one call,
// the epilogue over the strip after it; the partial tiles one by one.
func (j *gemmJob[T]) macroStrips(buf *gemmBuffers[T], ic, mc, jc, nc, kc int, set bool, ep *Epilogue[T]) {
	mr, nr := j.kern.mr, j.kern.nr
	strip := j.kern.tiles
	if set {
		strip = j.kern.setTiles
	}
	fullRows, fullCols := mc/mr, nc/nr
	if kc <= gemmShortK {
		for ir := 0; ir < mc; ir += mr {
			jr := 0
			if ir+mr <= mc && fullCols > 0 {
				strip(kc, buf.a[ir*kc:], buf.b, j.c[(ic+ir)*j.ldc+jc:], j.ldc, fullCols, 0, nr*kc, nr)
				ep.apply(j.c, j.ldc, ic+ir, ic+ir+mr, jc, jc+fullCols*nr)
				jr = fullCols * nr
			}
			for ; jr < nc; jr += nr {
				j.tile(buf, ic, ir, mc, jc, jr, nc, kc, set, ep)
			}
		}
		return
	}
	for jr := 0; jr < nc; jr += nr {
		ir := 0
		if jr+nr <= nc && fullRows > 0 {
			strip(kc, buf.a, buf.b[jr*kc:], j.c[ic*j.ldc+jc+jr:], j.ldc, fullRows, mr*kc, 0, mr*j.ldc)
			ep.apply(j.c, j.ldc, ic, ic+fullRows*mr, jc+jr, jc+jr+nr)
			ir = fullRows * mr
		}
		for ; ir < mc; ir += mr {
			j.tile(buf, ic, ir, mc, jc, jr, nc, kc, set, ep)
		}
	}
}

// gemmShortK is the longest k for which macro walks C by rows: up to it
// rows first measured as fast or faster at every shape tried (a rank-10
// update of a 4096x4096 C 2.3x, of 4096x9216 1.9x; at k 128 1.0-1.3x);
// beyond it, with whole kc blocks, the two orders were within noise.
const gemmShortK = 128

// tile computes the tile of C at rows ic+ir and columns jc+jr of the
// block: A~ panel ir by B~ panel jr over kc steps, then the epilogue ep
// (on the last block of k) while the tile is in the L1 cache.
func (j *gemmJob[T]) tile(buf *gemmBuffers[T], ic, ir, mc, jc, jr, nc, kc int, set bool, ep *Epilogue[T]) {
	j.tileProduct(buf, ic, ir, mc, jc, jr, nc, kc, set)
	if ep != nil {
		ep.apply(j.c, j.ldc, ic+ir, ic+ir+min(j.kern.mr, mc-ir), jc+jr, jc+jr+min(j.kern.nr, nc-jr))
	}
}

// tileProduct is tile's product, stored to C where set (kern.set).
func (j *gemmJob[T]) tileProduct(buf *gemmBuffers[T], ic, ir, mc, jc, jr, nc, kc int, set bool) {
	kern := j.kern
	mr, nr := kern.mr, kern.nr
	ap, bp := buf.a[ir*kc:], buf.b[jr*kc:]
	rows, cols := min(mr, mc-ir), min(nr, nc-jr)
	off := (ic+ir)*j.ldc + jc + jr
	if rows == mr && cols == nr {
		if set {
			kern.set(kc, ap, bp, j.c[off:], j.ldc)
			return
		}
		kern.fn(kc, ap, bp, j.c[off:], j.ldc)
		return
	}
	if cols == nr && kern.rows != nil && !set {
		kern.rows[rows](kc, ap, bp, j.c[off:], j.ldc)
		return
	}
	if cols == nr && kern.setRows != nil && set {
		kern.setRows[rows](kc, ap, bp, j.c[off:], j.ldc)
		return
	}
	// An edge tile: compute the whole tile (or its first half) aside,
	// add its part.
	tile := buf.tile[:mr*nr]
	clear(tile)
	if kern.half != nil && cols <= nr/2 {
		kern.half(kc, ap, bp, tile, nr)
	} else {
		kern.fn(kc, ap, bp, tile, nr)
	}
	for r := range rows {
		dst := j.c[off+r*j.ldc : off+r*j.ldc+cols]
		if set {
			copy(dst, tile[r*nr:r*nr+cols])
			continue
		}
		for q, v := range tile[r*nr : r*nr+cols] {
			dst[q] += v
		}
	}
}

// packA packs rows [ic, ic+mc) and steps [pc, pc+kc) of alpha*op(A) into
// panels of mr rows: panel r holds, for each step p, the mr values of its
// rows at p (zero past the last row).
func (j *gemmJob[T]) packA(dst []T, ic, mc, pc, kc int) {
	mr := j.kern.mr
	for ir := 0; ir < mc; ir += mr {
		panel := dst[ir*kc : ir*kc+mr*kc]
		height := min(mr, mc-ir)
		if height < mr {
			clear(panel)
		}
		if j.transA {
			// op(A)[i][p] = A[p][i]: the panel's values at step p are
			// contiguous in A. All the panel's steps with one call where
			// alpha is 1 (a convolution's bottom gradient, W^T: copy's
			// memmove per step of 6 values took 4% of ResNet-50's
			// training pass on AVX2).
			if src := j.a[pc*j.lda+ic+ir:]; j.alpha == 1 && rows.Fit(len(src), height, kc, j.lda) {
				rows.Copy(panel, src, height, kc, mr, j.lda)
				continue
			}
			for p := range kc {
				src := j.a[(pc+p)*j.lda+ic+ir : (pc+p)*j.lda+ic+ir+height]
				scaleCopy(panel[p*mr:p*mr+height], src, j.alpha)
			}
			continue
		}
		if j.gathers(j.a, (ic+ir)*j.lda+pc, j.lda, kc, height) {
			j.kern.gather(panel, j.a[(ic+ir)*j.lda+pc:], j.lda, kc, height, mr, j.alpha)
			continue
		}
		// Row by row: each row of A is read in sequence and written to
		// every mr-th place of the panel (faster here than step by step
		// across the rows).
		for r := range height {
			i := ic + ir + r
			src := j.a[i*j.lda+pc : i*j.lda+pc+kc]
			if j.alpha == 1 {
				for p, v := range src {
					panel[p*mr+r] = v
				}
				continue
			}
			for p, v := range src {
				panel[p*mr+r] = j.alpha * v
			}
		}
	}
}

// gathers reports whether the kernel's gather can pack rows rows of k steps
// starting at src[off], ld apart: it has one, the rows lie inside src, and
// their offsets fit the gather's 32-bit indices.
func (j *gemmJob[T]) gathers(src []T, off, ld, k, rows int) bool {
	return j.kern.gather != nil && rows > 0 && k > 0 && off+(rows-1)*ld+k <= len(src) && int64(rows)*int64(ld) < 1<<28
}

// scaleCopy copies src into dst times alpha.
func scaleCopy[T Float](dst, src []T, alpha T) {
	if alpha == 1 {
		copy(dst, src)
		return
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = alpha * v
	}
}

// packB packs steps [pc, pc+kc) and columns [jc, jc+nc) of op(B) into
// panels of nr columns: panel q holds, for each step p, the nr values of
// its columns at p (zero past the last column).
func (j *gemmJob[T]) packB(dst []T, pc, kc, jc, nc int) {
	nr := j.kern.nr
	if j.panels != nil && j.panelTaps {
		j.panels.packTaps(dst, pc, kc, jc, nc, nr, j.kern.gather)
		return
	}
	if j.panels != nil {
		j.panels.pack(dst, pc, kc, jc, nc, nr)
		return
	}
	start := 0
	if full := nc / nr; !j.transB && full > 1 {
		// The full panels step by step: each row of the block read in
		// sequence, its nr-value pieces written to the panels, kc*nr
		// apart. Panel by panel, the reads jumped to another row every
		// nr values, and the convolutions' products took 8-17% longer
		// (AVX2, BenchmarkConvGemm -cpu 1).
		if src := j.b[pc*j.ldb+jc:]; rows.Fit(len(src), full*nr, kc, j.ldb) && full*kc*nr <= len(dst) {
			for p := range kc {
				rows.Copy(dst[p*nr:], src[p*j.ldb:], nr, full, kc*nr, nr)
			}
			start = full * nr
		}
	}
	for jr := start; jr < nc; jr += nr {
		panel := dst[jr*kc : jr*kc+nr*kc]
		cols := min(nr, nc-jr)
		if cols < nr {
			clear(panel)
		}
		if j.transB && j.gathers(j.b, (jc+jr)*j.ldb+pc, j.ldb, kc, cols) {
			j.kern.gather(panel, j.b[(jc+jr)*j.ldb+pc:], j.ldb, kc, cols, nr, 1)
			continue
		}
		if j.transB { // op(B)[p][q] = B[q][p]
			for q := range cols {
				src := j.b[(jc+jr+q)*j.ldb+pc : (jc+jr+q)*j.ldb+pc+kc]
				for p, v := range src {
					panel[p*nr+q] = v
				}
			}
			continue
		}
		// All the panel's rows with one call (copy's call to memmove for
		// each row of 64 bytes took a third of a convolution's time at
		// batch 1 on AVX2).
		if src := j.b[pc*j.ldb+jc+jr:]; rows.Fit(len(src), cols, kc, j.ldb) {
			rows.Copy(panel, src, cols, kc, nr, j.ldb)
			continue
		}
		for p := range kc {
			row := (pc + p) * j.ldb
			copy(panel[p*nr:p*nr+cols], j.b[row+jc+jr:row+jc+jr+cols])
		}
	}
}

// goKernel is the micro-kernel in plain Go, for CPUs without one in
// assembly (and as the reference the tests hold the others to).
func goKernel[T Float](mr, nr int) func(k int, a, b, c []T, ldc int) {
	return func(k int, a, b, c []T, ldc int) {
		var acc [64]T // mr*nr <= 64
		for p := range k {
			ap, bp := a[p*mr:p*mr+mr], b[p*nr:p*nr+nr]
			for r, av := range ap {
				row := acc[r*nr : r*nr+nr]
				for q, bv := range bp {
					row[q] += av * bv
				}
			}
		}
		for r := range mr {
			dst := c[r*ldc : r*ldc+nr]
			for q := range dst {
				dst[q] += acc[r*nr+q]
			}
		}
	}
}
