package mathfn

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
)

// Winograd's minimal filtering F(4x4, 3x3) for 2-D convolutions with 3x3
// filters, stride 1 and no dilation (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2015): each 4x4 block of
// an output plane comes from a 6x6 tile of the padded input, the tiles
// overlapping by 2. With the tile and the filter transformed (V = B^T d B,
// U = G g G^T) the convolution is, per point xi of the 36 of the 6x6
// transformed domain, one product M[xi] = U[xi] * V[xi] of an outputs x
// channels matrix by a channels x tiles one; the output block is then
// A^T M A. That is 36 multiplications per output block and channel pair
// where im2col's GEMM does 144, for the price of the three transforms.
// In groups each point's product is one per group: the transforms work
// channel by channel, and a group's channels are consecutive rows of V
// and M.
//
// The interpolation points are 0, +-1, +-2 and infinity, whose transforms
// hold only small integers and powers of two (G's 1/4, 1/6, 1/12 and 1/24
// are applied once, in float64, to the filters). Against a float64
// convolution the float32 outputs differ by 1e-7 to 8e-6 of their largest
// magnitude on random layers up to ResNet-50's 512 channels
// (winograd_test.go), inside the 1e-4 a folded net may differ by. F(6x6,
// 3x3), which OpenCV's dnn uses, needs the points +-1/2 as well, whose
// larger transform entries lose more; it was not tried here.

// WinogradTile is the input tile's side, WinogradOut the output block's.
const (
	WinogradTile = 6
	WinogradOut  = 4
	winoPoints   = WinogradTile * WinogradTile
)

// Winograd is one convolution layer's Winograd state: the transformed
// filters, packed for the GEMM kernels once per weight change
// (NewWinograd), and the transforms' scratch, sized by Reshape. The
// transformed tiles and products (V and M) are borrowed for each pass
// from buffers all layers share (winoBuffers), so that after the first
// pass at a shape Forward allocates nothing.
type Winograd[T Float] struct {
	cout, cin int // in all the groups
	groups    int
	// u[g][xi] is group g's U[xi], cout/groups x cin/groups.
	u [][winoPoints]*PackedA[T]

	// Set by Reshape.
	num, h, w, padH, padW int
	outH, outW            int
	tilesX, perImage      int // tiles in a row, in an image
	tiles, block          int // in all the images; per round of products
	// V[xi][cin][cnt] and M[xi][cout][cnt] of a round, during a pass:
	// borrowed from winoBuffers, as the layers of a net run one at a time.
	v, m []T
	// The vector transforms' (winoVector): where each tile of the round
	// starts in a part's staged planes (inOff) and in the top (outOff,
	// -1 for a block the output's edge cuts), and each part's scratch.
	inOff, outOff  []int
	stageH, stageW int // a staged plane: padded, and wide and long enough for every tile's reads
	ldo            int // the output rows' stride for the kernel
	scratch        []winoScratch[T]

	// The pass in progress, read by the part bodies (made once, so that a
	// pass allocates nothing).
	x, y                      []T
	ep                        *Epilogue[T]
	t0, cnt                   int
	inPart, gemmPart, outPart func(part, lo, hi int)
}

// winoScratch is one part's scratch for the vector transforms.
type winoScratch[T Float] struct {
	stage []T // the round's images' planes of one channel, padded
	edge  []T // 8 blocks of the output's edge, ldo apart
	in    [288]float32
	out   [192]float32
	lanes [winoPoints * 8]T // a short last group's points
	ptrs  [8]unsafe.Pointer
}

// winoPair is a pass's V and M.
type winoPair[T Float] struct{ v, m []T }

// The V and M of the passes in progress, kept for the next: every
// Winograd layer of a net borrows the same ones (the largest any needs,
// at most winoBlockBytes), where each of its own would hold up to
// winoBlockBytes for the net's life.
var (
	swinoBuffers freeList[winoPair[float32]]
	dwinoBuffers freeList[winoPair[float64]]
)

// winoBlockBytes bounds the transformed tiles of one round (V and M
// together): small enough that they stay in the shared L3 cache between
// the transforms and the products (32 MB on the EPYC the figures in
// layer/vision/conv_winograd.go come from), large enough that each product
// reuses every packed block of U over many columns.
const winoBlockBytes = 8 << 20

// winoMinBlock is the least number of tiles of a round where there are
// that many: the GEMM kernels' tiles are 16 columns wide.
const winoMinBlock = 32

// NewWinograd transforms the filters w (cout x cin x 3 x 3, as a
// convolution's weights) and packs them for the products. w is read only
// here: a change of weights needs a new Winograd.
func NewWinograd[T Float](cout, cin int, w []T) (*Winograd[T], error) {
	return NewWinogradScaled(cout, cin, w, nil)
}

// winoChunk is how many outputs' filters NewWinogradScaled transforms at a
// time before packing them (a multiple of every kernel's mr): the
// transformed filters of a whole layer, unpacked, were nine times its
// weights in garbage (68 MB over a folded ResNet-50's first pass, which
// the collector's pacing then kept in the resident set).
const winoChunk = 48

// winoChunkPools lend NewWinogradScaled's chunk of transformed filters
// (float32, float64) from one layer to the next: a net transforms its
// layers one after another in its first pass, and a chunk of each left
// behind was 15 MB more garbage in a ResNet-50's (a sync.Pool, not a
// freeList: nothing is held once the layers are made).
var winoChunkPools [2]sync.Pool

func winoChunkPool[T Float]() *sync.Pool {
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		return &winoChunkPools[1]
	}
	return &winoChunkPools[0]
}

// NewWinogradScaled is NewWinograd of the filters of output o multiplied
// by scale[o] (nil: by 1), each weight rounded to T once after scaling as
// a scaled copy of w would hold it: an inference fold's weights
// transformed straight from the layer's own.
func NewWinogradScaled[T Float](cout, cin int, w []T, scale []float64) (*Winograd[T], error) {
	return NewWinogradGroups(cout, cin, 1, w, scale)
}

// NewWinogradGroups is NewWinogradScaled of a convolution in groups: cout
// outputs and cin channels in all, w cout x cin/groups x 3 x 3 (a grouped
// convolution's weights), output o's filters over the channels of its
// group.
func NewWinogradGroups[T Float](cout, cin, groups int, w []T, scale []float64) (*Winograd[T], error) {
	if cout <= 0 || cin <= 0 || groups <= 0 {
		return nil, fmt.Errorf("winograd: %d outputs, %d channels and %d groups, want all positive", cout, cin, groups)
	}
	if cout%groups != 0 || cin%groups != 0 {
		return nil, fmt.Errorf("winograd: %d outputs and %d channels do not split into %d groups", cout, cin, groups)
	}
	og, cg := cout/groups, cin/groups
	if len(w) < cout*cg*9 {
		return nil, fmt.Errorf("winograd: %d weights for %d x %d 3x3 filters", len(w), cout, cg)
	}
	if scale != nil && len(scale) < cout {
		return nil, fmt.Errorf("winograd: %d scales for %d outputs", len(scale), cout)
	}
	wg := &Winograd[T]{cout: cout, cin: cin, groups: groups, u: make([][winoPoints]*PackedA[T], groups)}
	wg.inPart, wg.gemmPart, wg.outPart = wg.inputPart, wg.productPart, wg.outputPart
	for g := range groups {
		var sg []float64
		if scale != nil {
			sg = scale[g*og : (g+1)*og]
		}
		transformFilters(&wg.u[g], og, cg, w[g*og*cg*9:(g+1)*og*cg*9], sg)
	}
	return wg, nil
}

// transformFilters sets u to the transformed filters of cout outputs over
// cin channels (w, scaled by scale: nil for 1), packed for the products.
func transformFilters[T Float](u *[winoPoints]*PackedA[T], cout, cin int, w []T, scale []float64) {
	for xi := range winoPoints {
		u[xi] = newPackedA[T](false, cout, cin)
		// Only the panels are kept: the linked BLAS (the openblas
		// build), which reads U[xi] unpacked, has it unpacked from them
		// once (PackedA.source); it is four times the weights.
		u[xi].derive = true
	}
	// U is computed in float64 and rounded once, winoChunk outputs at a
	// time: U[xi] of those outputs, rows of cin, then packed.
	chunk := min(cout, winoChunk)
	pool := winoChunkPool[T]()
	up, _ := pool.Get().(*[]T)
	if up == nil {
		up = new([]T)
	}
	*up = grow(*up, winoPoints*chunk*cin)
	defer pool.Put(up)
	buf := *up
	for o0 := 0; o0 < cout; o0 += chunk {
		n := min(chunk, cout-o0)
		for o := o0; o < o0+n; o++ {
			s := 1.0
			if scale != nil {
				s = scale[o]
			}
			for c := range cin {
				var g [9]float64
				for i, v := range w[(o*cin+c)*9 : (o*cin+c)*9+9] {
					if scale != nil {
						v = T(float64(v) * s)
					}
					g[i] = float64(v)
				}
				t := winoFilter(&g)
				for xi, v := range t {
					buf[(xi*chunk+o-o0)*cin+c] = T(v)
				}
			}
		}
		for xi := range winoPoints {
			u[xi].packRows(o0, n, buf[xi*chunk*cin:], cin, nil)
		}
	}
}

// winoFilter returns G g G^T for a 3x3 filter g (row-major), 6x6.
func winoFilter(g *[9]float64) [winoPoints]float64 {
	// G is 6x3: rows (1/4, 0, 0), (-1/6, -1/6, -1/6), (-1/6, 1/6, -1/6),
	// (1/24, 1/12, 1/6), (1/24, -1/12, 1/6), (0, 0, 1).
	col := func(a, b, c float64) [6]float64 {
		return [6]float64{a / 4, -(a + b + c) / 6, -(a - b + c) / 6, (a + 2*b + 4*c) / 24, (a - 2*b + 4*c) / 24, c}
	}
	var gg [3][6]float64 // (G g)^T: for each column of g, G times it
	for j := range 3 {
		gg[j] = col(g[j], g[3+j], g[6+j])
	}
	var out [winoPoints]float64
	for i := range 6 {
		r := col(gg[0][i], gg[1][i], gg[2][i])
		copy(out[i*6:], r[:])
	}
	return out
}

// Reshape sets the shape, num images of channels x h x w padded by padH
// and padW, whose outputs are (h+2padH-2) x (w+2padW-2), and sizes the
// scratch; it allocates only when a buffer must grow.
func (wg *Winograd[T]) Reshape(num, h, w, padH, padW int) error {
	outH, outW := h+2*padH-2, w+2*padW-2
	if num <= 0 || h <= 0 || w <= 0 || padH < 0 || padW < 0 || outH <= 0 || outW <= 0 {
		return fmt.Errorf("winograd: %d images of %dx%d with pad %d,%d have no 3x3 outputs", num, h, w, padH, padW)
	}
	wg.num, wg.h, wg.w, wg.padH, wg.padW, wg.outH, wg.outW = num, h, w, padH, padW, outH, outW
	wg.tilesX = (outW + WinogradOut - 1) / WinogradOut
	wg.perImage = wg.tilesX * ((outH + WinogradOut - 1) / WinogradOut)
	wg.tiles = num * wg.perImage
	wg.block = min(wg.tiles, max(winoMinBlock, winoBlockBytes/(winoPoints*(wg.cin+wg.cout)*4)/16*16))
	if wg.vector() {
		wg.reshapeVector()
	}
	return nil
}

// winoStride is how far apart the points' matrices of n values are in V
// and M: an odd number of 64-byte cache lines. The transforms read or
// write the 36 points of a tile at once, and at a stride of an even
// number of lines those fall into a few sets of the L1 cache (8-way, 64
// sets) and evict each other.
func winoStride(n int) int {
	lines := (n + 15) / 16
	if lines%2 == 0 {
		lines++
	}
	return lines * 16
}

// WinogradVector reports whether Winograd's transforms of T run on
// vector kernels on this CPU and build (float32 with AVX2 and FMA). In Go
// they took 70% of a layer's time, and the way lost to im2col.
func WinogradVector[T Float]() bool {
	var zero T
	return winoVector && unsafe.Sizeof(zero) == 4
}

// vector says whether the transforms run on the vector kernels: float32
// on a CPU that has them.
func (wg *Winograd[T]) vector() bool {
	var zero T
	return winoVector && unsafe.Sizeof(zero) == 4
}

// reshapeVector sizes the vector transforms' buffers: a part stages the
// planes of every image a round touches.
func (wg *Winograd[T]) reshapeVector() {
	tilesY := wg.perImage / wg.tilesX
	wg.stageH, wg.stageW = WinogradOut*tilesY+2, WinogradOut*wg.tilesX+4
	images := min(wg.num, (wg.block+wg.perImage-1)/wg.perImage+1)
	wg.ldo = wg.outW
	if wg.outW < WinogradOut {
		wg.ldo = WinogradOut // every block is an edge block
	}
	wg.inOff = growInts(wg.inOff, wg.block)
	wg.outOff = growInts(wg.outOff, wg.block)
	wg.sizeScratch()
	for i := range wg.scratch {
		sc := &wg.scratch[i]
		sc.stage = grow(sc.stage, images*wg.stageH*wg.stageW)
		sc.edge = grow(sc.edge, 8*WinogradOut*wg.ldo)
	}
}

// sizeScratch makes a scratch for each part Parallel may run.
func (wg *Winograd[T]) sizeScratch() {
	for len(wg.scratch) < runtime.GOMAXPROCS(0) {
		wg.scratch = append(wg.scratch, winoScratch[T]{})
	}
}

// growInts returns s with length n, reusing its array when it is big
// enough.
func growInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// Forward computes y = ep(conv(x)) for the shape of the last Reshape: x
// is num x cin x h x w, y num x cout x outH x outW; ep's RowBias (one per
// output channel) and activation apply, its ColBias must be nil. The
// transforms and products of each round of tiles are spread over the
// cores: the input transform by channels, the 36 products (per group) by
// point (each on one core: at batch 1 a late layer has few tiles, too few
// columns to split a product), the output transform by output channels.
func (wg *Winograd[T]) Forward(x, y []T, ep *Epilogue[T]) {
	if len(x) < wg.num*wg.cin*wg.h*wg.w || len(y) < wg.num*wg.cout*wg.outH*wg.outW {
		panic(fmt.Sprintf("winograd: %d inputs and %d outputs for %d images", len(x), len(y), wg.num))
	}
	if ep != nil && ep.ColBias != nil {
		panic("winograd: an epilogue with column biases")
	}
	wg.x, wg.y, wg.ep = x, y, ep
	if wg.vector() && len(wg.scratch) < runtime.GOMAXPROCS(0) {
		wg.reshapeVector() // GOMAXPROCS grew since Reshape
	}
	list := listOf[T, winoPair[float32], winoPair[float64], winoPair[T]](&swinoBuffers, &dwinoBuffers)
	buf := list.get()
	buf.v = grow(buf.v, winoPoints*winoStride(wg.cin*wg.block))
	// 8 more: the output kernel reads a short last group's 8 lanes.
	buf.m = grow(buf.m, winoPoints*winoStride(wg.cout*wg.block)+8)
	wg.v, wg.m = buf.v, buf.m
	defer func() {
		wg.v, wg.m = nil, nil
		list.put(buf)
	}()
	for t0 := 0; t0 < wg.tiles; t0 += wg.block {
		wg.t0, wg.cnt = t0, min(wg.block, wg.tiles-t0)
		if wg.vector() {
			wg.roundOffsets()
		}
		// In chunks (each channel or point on its own): a helper that
		// starts late leaves its share to the others (parallel.go).
		ParallelChunks(wg.cin, wg.inPart)
		ParallelChunks(winoPoints*wg.groups, wg.gemmPart)
		ParallelChunks(wg.cout, wg.outPart)
	}
	wg.x, wg.y, wg.ep = nil, nil, nil
}

// productPart computes the products [lo, hi) of the round, point by
// point and in each point group by group: product i is point i/groups's
// of group i%groups, whose channels' and outputs' rows of V and M follow
// those of the groups before.
func (wg *Winograd[T]) productPart(_, lo, hi int) {
	vs, ms := winoStride(wg.cin*wg.cnt), winoStride(wg.cout*wg.cnt)
	vg, mg := wg.cin/wg.groups*wg.cnt, wg.cout/wg.groups*wg.cnt
	for i := lo; i < hi; i++ {
		xi, g := i/wg.groups, i%wg.groups
		v, m := wg.v[xi*vs+g*vg:xi*vs+(g+1)*vg], wg.m[xi*ms+g*mg:xi*ms+(g+1)*mg]
		GemmPackedEpilogue(wg.u[g][xi], blas.NoTrans, wg.cnt, v, m, nil, true)
	}
}

// tileAt returns the image, and the top-left corner in the output, of
// tile t.
func (wg *Winograd[T]) tileAt(t int) (n, oy, ox int) {
	n, r := t/wg.perImage, t%wg.perImage
	return n, r / wg.tilesX * WinogradOut, r % wg.tilesX * WinogradOut
}

// roundOffsets computes where each tile of the round starts in the
// staged planes and in the top's plane of its channel.
func (wg *Winograd[T]) roundOffsets() {
	n0 := wg.t0 / wg.perImage
	plane := wg.outH * wg.outW
	for t := range wg.cnt {
		n, oy, ox := wg.tileAt(wg.t0 + t)
		wg.inOff[t] = ((n-n0)*wg.stageH+oy)*wg.stageW + ox
		wg.outOff[t] = -1
		if oy+WinogradOut <= wg.outH && ox+WinogradOut <= wg.outW {
			wg.outOff[t] = n*wg.cout*plane + oy*wg.outW + ox
		}
	}
}

// inputPart transforms the round's tiles of channels [lo, hi) into V.
func (wg *Winograd[T]) inputPart(part, lo, hi int) {
	if wg.vector() {
		wg.inputVector(&wg.scratch[part], lo, hi)
		return
	}
	plane := wg.h * wg.w
	cnt, vs := wg.cnt, winoStride(wg.cin*wg.cnt)
	var d [winoPoints]T
	for c := lo; c < hi; c++ {
		v := wg.v[c*cnt:]
		for t := range cnt {
			n, oy, ox := wg.tileAt(wg.t0 + t)
			wg.loadTile(&d, wg.x[(n*wg.cin+c)*plane:(n*wg.cin+c+1)*plane], oy-wg.padH, ox-wg.padW)
			winoInput(&d)
			for xi, e := range d {
				v[xi*vs+t] = e
			}
		}
	}
}

// inputVector is inputPart on the vector kernel, eight tiles at a time,
// from planes staged with their padding.
func (wg *Winograd[T]) inputVector(sc *winoScratch[T], lo, hi int) {
	cnt, vs := wg.cnt, winoStride(wg.cin*wg.cnt)
	ld := wg.stageW * 4
	for c := lo; c < hi; c++ {
		wg.stage(sc.stage, c)
		v := wg.v[c*cnt:]
		for g := 0; g < cnt; g += 8 {
			lanes := min(8, cnt-g)
			for k := range 8 {
				sc.ptrs[k] = unsafe.Pointer(&sc.stage[wg.inOff[g+min(k, lanes-1)]])
			}
			if lanes == 8 {
				winoInputAVX2(&sc.ptrs, ld, unsafe.Pointer(&v[g]), vs*4, &sc.in)
				continue
			}
			winoInputAVX2(&sc.ptrs, ld, unsafe.Pointer(&sc.lanes[0]), 8*4, &sc.in)
			for xi := range winoPoints {
				copy(v[xi*vs+g:xi*vs+g+lanes], sc.lanes[xi*8:xi*8+lanes])
			}
		}
	}
}

// stage copies channel c of the round's images into stage, one padded
// plane each (stageH x stageW, zeros around the image).
func (wg *Winograd[T]) stage(stage []T, c int) {
	n0, n1 := wg.t0/wg.perImage, (wg.t0+wg.cnt-1)/wg.perImage
	plane, sw := wg.h*wg.w, wg.stageW
	for n := n0; n <= n1; n++ {
		x := wg.x[(n*wg.cin+c)*plane : (n*wg.cin+c+1)*plane]
		dst := stage[(n-n0)*wg.stageH*sw : (n-n0+1)*wg.stageH*sw]
		for r := range wg.stageH {
			row := dst[r*sw : (r+1)*sw]
			y := r - wg.padH
			if y < 0 || y >= wg.h {
				clear(row)
				continue
			}
			clear(row[:wg.padW])
			copy(row[wg.padW:], x[y*wg.w:(y+1)*wg.w])
			clear(row[wg.padW+wg.w:])
		}
	}
}

// loadTile copies the 6x6 tile of plane (h x w) whose corner is at row
// y0 and column x0 into d, with zeros where it lies outside.
func (wg *Winograd[T]) loadTile(d *[winoPoints]T, plane []T, y0, x0 int) {
	h, w := wg.h, wg.w
	if y0 >= 0 && x0 >= 0 && y0+WinogradTile <= h && x0+WinogradTile <= w {
		for i := range WinogradTile {
			copy(d[i*WinogradTile:(i+1)*WinogradTile], plane[(y0+i)*w+x0:])
		}
		return
	}
	for i := range WinogradTile {
		row := d[i*WinogradTile : (i+1)*WinogradTile]
		y := y0 + i
		if y < 0 || y >= h {
			clear(row)
			continue
		}
		for j := range row {
			if x := x0 + j; x >= 0 && x < w {
				row[j] = plane[y*w+x]
			} else {
				row[j] = 0
			}
		}
	}
}

// winoInput replaces the tile d by B^T d B. B^T is 6x6: rows
// (4, 0, -5, 0, 1, 0), (0, -4, -4, 1, 1, 0), (0, 4, -4, -1, 1, 0),
// (0, -2, -1, 2, 1, 0), (0, 2, -1, -2, 1, 0), (0, 4, 0, -5, 0, 1).
func winoInput[T Float](d *[winoPoints]T) {
	var t [winoPoints]T
	for j := range 6 { // t = B^T d, column by column
		d0, d1, d2, d3, d4, d5 := d[j], d[6+j], d[12+j], d[18+j], d[24+j], d[30+j]
		t[j], t[6+j], t[12+j], t[18+j], t[24+j], t[30+j] = winoIn6(d0, d1, d2, d3, d4, d5)
	}
	for i := range 6 { // d = t B, row by row
		r := t[i*6 : i*6+6 : i*6+6]
		d[i*6], d[i*6+1], d[i*6+2], d[i*6+3], d[i*6+4], d[i*6+5] = winoIn6(r[0], r[1], r[2], r[3], r[4], r[5])
	}
}

// winoIn6 is B^T times a vector of 6.
func winoIn6[T Float](d0, d1, d2, d3, d4, d5 T) (T, T, T, T, T, T) {
	a, b := d4-4*d2, d3-4*d1 // rows 1 and 2: d4 - 4d2 -+ (4d1 - d3)
	c, e := d4-d2, 2*(d3-d1) //  rows 3 and 4: d4 - d2 +- 2(d3 - d1)
	return 4*d0 - 5*d2 + d4, a + b, a - b, c + e, c - e, 4*d1 - 5*d3 + d5
}

// outputPart transforms the round's products of output channels
// [lo, hi) into y, with the epilogue.
func (wg *Winograd[T]) outputPart(part, lo, hi int) {
	if wg.vector() && (wg.ep == nil || !wg.ep.ReLU || wg.ep.Slope == 0) {
		wg.outputVector(&wg.scratch[part], lo, hi)
		return
	}
	plane := wg.outH * wg.outW
	cnt, ms := wg.cnt, winoStride(wg.cout*wg.cnt)
	var m [winoPoints]T
	var o [WinogradOut * WinogradOut]T
	for c := lo; c < hi; c++ {
		var bias T
		relu, slope := false, T(0)
		if wg.ep != nil {
			if wg.ep.RowBias != nil {
				bias = wg.ep.RowBias[c]
			}
			relu, slope = wg.ep.ReLU, wg.ep.Slope
		}
		src := wg.m[c*cnt:]
		for t := range cnt {
			for xi := range m {
				m[xi] = src[xi*ms+t]
			}
			winoOutput(&m, &o)
			n, oy, ox := wg.tileAt(wg.t0 + t)
			wg.storeBlock(&o, wg.y[(n*wg.cout+c)*plane:(n*wg.cout+c+1)*plane], oy, ox, bias, relu, slope)
		}
	}
}

// outputVector is outputPart on the vector kernel, eight tiles at a
// time: the blocks inside the output straight into it, those its edge
// cuts through the scratch.
func (wg *Winograd[T]) outputVector(sc *winoScratch[T], lo, hi int) {
	plane := wg.outH * wg.outW
	cnt, ms := wg.cnt, winoStride(wg.cout*wg.cnt)
	relu := 0
	if wg.ep != nil && wg.ep.ReLU {
		relu = 1
	}
	for c := lo; c < hi; c++ {
		var bias float32
		if wg.ep != nil && wg.ep.RowBias != nil {
			bias = float32(wg.ep.RowBias[c])
		}
		for g := 0; g < cnt; g += 8 {
			lanes := min(8, cnt-g)
			edges := false
			for k := range 8 {
				if k < lanes && wg.outOff[g+k] >= 0 {
					sc.ptrs[k] = unsafe.Pointer(&wg.y[wg.outOff[g+k]+c*plane])
					continue
				}
				sc.ptrs[k] = unsafe.Pointer(&sc.edge[k*WinogradOut*wg.ldo])
				edges = edges || k < lanes
			}
			winoOutputAVX2(unsafe.Pointer(&wg.m[c*cnt+g]), ms*4, &sc.ptrs, wg.ldo*4, &sc.out, bias, relu)
			if edges {
				wg.copyEdges(sc, c, g, lanes)
			}
		}
	}
}

// copyEdges copies the group's blocks that the output's edge cuts from
// the scratch into the top.
func (wg *Winograd[T]) copyEdges(sc *winoScratch[T], c, g, lanes int) {
	plane := wg.outH * wg.outW
	for k := range lanes {
		if wg.outOff[g+k] >= 0 {
			continue
		}
		n, oy, ox := wg.tileAt(wg.t0 + g + k)
		rows, cols := min(WinogradOut, wg.outH-oy), min(WinogradOut, wg.outW-ox)
		y := wg.y[(n*wg.cout+c)*plane:]
		for i := range rows {
			copy(y[(oy+i)*wg.outW+ox:(oy+i)*wg.outW+ox+cols], sc.edge[k*WinogradOut*wg.ldo+i*wg.ldo:])
		}
	}
}

// winoOutput computes the 4x4 block A^T m A. A^T is 4x6: rows
// (1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0), (0, 1, 1, 4, 4, 0),
// (0, 1, -1, 8, -8, 1).
func winoOutput[T Float](m *[winoPoints]T, o *[WinogradOut * WinogradOut]T) {
	var t [WinogradOut * 6]T
	for j := range 6 { // t = A^T m, column by column
		t[j], t[6+j], t[12+j], t[18+j] = winoOut6(m[j], m[6+j], m[12+j], m[18+j], m[24+j], m[30+j])
	}
	for i := range WinogradOut { // o = t A, row by row
		r := t[i*6 : i*6+6 : i*6+6]
		o[i*4], o[i*4+1], o[i*4+2], o[i*4+3] = winoOut6(r[0], r[1], r[2], r[3], r[4], r[5])
	}
}

// winoOut6 is A^T times a vector of 6.
func winoOut6[T Float](m0, m1, m2, m3, m4, m5 T) (T, T, T, T) {
	a, b := m1+m2, m1-m2
	c, d := m3+m4, m3-m4
	return m0 + a + c, b + 2*d, a + 4*c, b + 8*d + m5
}

// storeBlock writes the part of the 4x4 block o inside the plane (outH x
// outW) at row oy and column ox, with the bias added and the activation
// applied as Epilogue does (Caffe's ReLU: a NaN stays NaN).
func (wg *Winograd[T]) storeBlock(o *[WinogradOut * WinogradOut]T, plane []T, oy, ox int, bias T, relu bool, slope T) {
	rows, cols := min(WinogradOut, wg.outH-oy), min(WinogradOut, wg.outW-ox)
	for i := range rows {
		dst := plane[(oy+i)*wg.outW+ox : (oy+i)*wg.outW+ox+cols]
		for j := range dst {
			v := o[i*WinogradOut+j] + bias
			if relu {
				if slope == 0 {
					if !(v > 0) && v == v {
						v = 0
					}
				} else if v < 0 {
					v *= slope
				}
			}
			dst[j] = v
		}
	}
}
