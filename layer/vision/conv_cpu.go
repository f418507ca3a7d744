package vision

import (
	"github.com/gocaffe/gocaffe/layer"
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// The host's convolution: the images of a pass are spread over the cores
// (mathfn.Parallel), each part with a column buffer of its own and serial
// GEMMs, rather than one image at a time with each GEMM split over the
// cores: a convolution's per-image GEMMs are too small to split well
// (LeNet's conv2: 50 x 64 x 500), while its images are independent. The
// weight and bias gradients are summed per part, then into the blobs.

// convCPU is the per-part scratch of the host's passes.
type convCPU[T layer.Float] struct {
	cols, wdiffs, bdiffs [][]T
	// col is a folded pass's columns at one part where the layer has no
	// net's scratch (conv_fold.go).
	col []T
	// The backward pass's images to a product (conv_backward_batch.go),
	// and its buffers per part when above 1.
	batch               int
	batchCols, batchDys [][]T
	// chunk is the output rows of an image a product covers in the
	// image-by-image passes (conv_chunks.go); 0: the whole image.
	chunk int
	// packed is the weights packed for the GEMM kernels once for the
	// forward pass in progress when usePacked (every part's products
	// read it), its panels in the net's scratch; packedBlocks is the
	// layer's own where it has no net. In the backward pass it holds the
	// weights transposed, for the bottom gradient's products, when
	// usePackedT (conv_backward_packed.go).
	packed                *mathfn.PackedA[T]
	packedBlocks          []T
	usePacked, usePackedT bool
	// The passes without a column buffer (conv_panels.go): whether the
	// forward pass and the bottom gradient take them, each part's panels
	// and padded images and the bottom gradient's geometry (its flipped
	// weights are in c.packed when useFlipped).
	usePanels, useFlipped, useTaps bool
	panels                         []*mathfn.ConvPanels[T]
	paddeds                        [][]T
	geoT                           mathfn.ConvGeometry
	// The backward pass's parameter gradients (conv_grad_sum.go): the
	// blobs' diffs (nil where not wanted), which part 0 adds to, and the
	// reduction's body.
	blobW, blobB []T
	sumPart      func(part, lo, hi int)
	sumParts     int

	// The pass in progress, read by the part bodies.
	bottom, top   []*blob.Blob[T]
	propagateDown []bool
	// Made once (method values), so that a pass allocates nothing.
	forwardPart, backwardPart func(part, lo, hi int)
	foldedPart                func(part, lo, hi int) // conv_fold.go
	target                    foldTarget[T]          // the folded pass's, read by foldedPart
	// foldPanels: the folded pass takes its products from padded images
	// (conv_fold.go), of one group's channels, geoG.
	foldPanels bool
	geoG       mathfn.ConvGeometry

	// One image's im2col split over the cores by channels (conv_fold.go):
	// the image, its columns, each part's geometry, the part body.
	imX, imCol []T
	imGeos     []mathfn.ConvGeometry
	im2colPart func(part, lo, hi int)
}

// serialHost is the host view of the parts of a pass: GEMMs on the calling
// goroutine (the parts already occupy the cores), and accessors that never
// change a blob's state, so that the parts can call them at once: the pass
// has brought every blob to the host on its own goroutine first, the
// written ones with their Mutable accessors.
type serialHost[T layer.Float] struct{ device.HostView[T] }

func (serialHost[T]) MutableData(b *blob.Blob[T]) []T { return b.CPUData() }
func (serialHost[T]) MutableDiff(b *blob.Blob[T]) []T { return b.CPUDiff() }

func (s serialHost[T]) Gemm(transA, transB blas.Transpose, m, n, k int, alpha T, a, b []T, beta T, c []T) {
	s.GemmSerial(transA, transB, m, n, k, alpha, a, b, beta, c)
}

// cpuParts returns how many parts the pass runs in, with their scratch
// sized; 1 means image by image with parallel GEMMs.
func (l *convBase[T]) cpuParts() int {
	parts := mathfn.Parts(l.num)
	l.panelSlots(max(parts, 1))
	if parts < 2 {
		return 1
	}
	c := &l.cpu
	if c.forwardPart == nil {
		c.forwardPart, c.backwardPart = l.forwardPart, l.backwardPart
	}
	colSize := l.kernelDim * l.group * l.convOutSpatial
	for len(c.cols) < parts {
		c.cols = append(c.cols, nil)
		c.wdiffs = append(c.wdiffs, nil)
		c.bdiffs = append(c.bdiffs, nil)
	}
	// The net's shared scratch (layer.HostScratch): the parts' weight
	// gradients alone took 200 MB in a ResNet-50 on two cores.
	for p := range parts {
		c.cols[p] = layer.ScratchOf(&l.Base, "conv.cols", p, &c.cols[p], colSize)
		if p == 0 {
			continue // part 0 adds to the blobs' gradients (conv_grad_sum.go)
		}
		c.wdiffs[p] = layer.ScratchOf(&l.Base, "conv.wdiffs", p, &c.wdiffs[p], l.Blobs()[0].Count())
		if l.biasTerm {
			c.bdiffs[p] = layer.ScratchOf(&l.Base, "conv.bdiffs", p, &c.bdiffs[p], l.Blobs()[1].Count())
		}
	}
	return parts
}

func (l *convBase[T]) forwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.fold.active && !l.FusionSuspended() {
		return l.forwardFolded(bottom, top)
	}
	if l.dwApplies() {
		var b []T
		if l.biasTerm {
			b = l.Blobs()[1].CPUData()
		}
		return l.forwardDepthwise(bottom, top, l.Blobs()[0].CPUData(), b, mathfn.Epilogue[T]{})
	}
	parts := l.cpuParts()
	c := &l.cpu
	c.batch = 1
	if l.convOutSpatial < convForwardBatchBelow {
		c.batch = l.backwardBatch(parts)
	}
	c.chunk = l.chunkRows(c.batch)
	if parts == 1 && c.batch == 1 && c.chunk == 0 {
		return convForward[T](l, device.Host[T](l.Context()), bottom, top)
	}
	c.bottom, c.top = bottom, top
	for _, b := range bottom { // sync on this goroutine, before the parts read
		b.CPUData()
	}
	for _, t := range top {
		t.MutableCPUData()
	}
	l.hostParams()
	// The weights packed once for all the pass's products: image by image
	// each product packed them again, all of them (ResNet-50's 25M
	// weights 8 times a pass at batch 8). Only for the default GEMM
	// choice (another takes its own code), one group, not deconvolutions.
	c.usePacked = !l.reverse && l.group == 1 && c.chunk == 0 && device.Host[T](l.Context()).GEMM() == settings.GEMMAuto
	if c.usePacked {
		blocks := layer.ScratchOf(&l.Base, "conv.packed", 0, &c.packedBlocks, mathfn.PackedASize[T](l.numOutput, l.kernelDim))
		c.packed = mathfn.PackAIn(c.packed, blas.NoTrans, l.numOutput, l.kernelDim, l.Blobs()[0].CPUData(), blocks)
	}
	c.usePanels = l.panelsForward()
	if c.usePanels {
		l.panelBuffers(parts)
	}
	if parts == 1 && c.batch > 1 {
		l.forwardHostBatched(0, 0, l.num)
	} else if parts == 1 {
		l.forwardChunked(0, l.num, l.col.MutableCPUData())
	} else {
		mathfn.Parallel(l.num, c.forwardPart)
	}
	c.bottom, c.top = nil, nil
	return nil
}

// hostParams brings the weights, bias and bias multiplier to the host.
func (l *convBase[T]) hostParams() {
	for _, b := range l.Blobs() {
		b.CPUData()
	}
	if l.biasMultiplier != nil {
		l.biasMultiplier.CPUData()
	}
}

func (l *convBase[T]) forwardPart(part, lo, hi int) {
	if l.cpu.batch > 1 {
		l.forwardHostBatched(part, lo, hi)
		return
	}
	if l.cpu.chunk > 0 {
		l.forwardChunked(lo, hi, l.cpu.cols[part])
		return
	}
	if l.cpu.usePacked {
		l.forwardPacked(part, lo, hi, l.cpu.cols[part])
		return
	}
	forwardImages(l, serialHost[T]{device.Host[T](l.Context())}, l.cpu.bottom, l.cpu.top, lo, hi, l.cpu.cols[part])
}

// forwardPacked is forwardImages for images [lo, hi) of a part with the
// weights packed (c.packed): the same products, without packing them
// again.
func (l *convBase[T]) forwardPacked(part, lo, hi int, col []T) {
	c := &l.cpu
	d := serialHost[T]{device.Host[T](l.Context())}
	for i := range c.bottom {
		x, y := d.Data(c.bottom[i]), d.MutableData(c.top[i])
		for n := lo; n < hi; n++ {
			b, out := x[n*l.bottomDim:(n+1)*l.bottomDim], y[n*l.topDim:(n+1)*l.topDim]
			switch {
			case c.usePanels:
				l.forwardPanels(part, b, out)
			case l.is1x1:
				mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, l.convOutSpatial, b, out, nil, true)
			default:
				d.Im2col(b, &l.geo, col)
				mathfn.GemmPackedEpilogue(c.packed, blas.NoTrans, l.convOutSpatial, col, out, nil, true)
			}
			if l.biasTerm {
				forwardBias(l, d, out, d.Data(l.Blobs()[1]))
			}
		}
	}
}

func (l *convBase[T]) backwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if l.dwApplies() {
		return l.backwardDepthwise(top, propagateDown, bottom)
	}
	parts := l.cpuParts()
	c := &l.cpu
	c.batch = l.backwardBatch(parts)
	c.chunk = l.chunkRows(c.batch)
	if parts == 1 && c.batch == 1 && c.chunk == 0 {
		return convBackward[T](l, device.Host[T](l.Context()), top, propagateDown, bottom)
	}
	c.bottom, c.top, c.propagateDown = bottom, top, propagateDown
	for i := range top { // every accessor on this goroutine, before the parts
		top[i].CPUDiff()
		bottom[i].CPUData()
		if propagateDown[i] {
			bottom[i].MutableCPUDiff()
		}
	}
	l.hostParams()
	l.packTransposed()
	c.useTaps = l.panelsWeights()
	if c.useTaps || c.useFlipped {
		l.panelBuffers(parts)
	}
	if parts == 1 {
		// One core: the batched pass alone, into the blobs' gradients
		// (they accumulate, as the products do).
		var wdiff, bdiff []T
		if l.ParamPropagateDown(0) {
			wdiff = l.Blobs()[0].MutableCPUDiff()
		}
		if l.biasTerm && l.ParamPropagateDown(1) {
			bdiff = l.Blobs()[1].MutableCPUDiff()
		}
		if c.batch > 1 {
			l.backwardHostBatched(0, 0, l.num, wdiff, bdiff)
		} else {
			l.backwardChunked(0, l.num, wdiff, bdiff, l.col.MutableCPUData())
		}
		c.bottom, c.top, c.propagateDown = nil, nil, nil
		return nil
	}
	l.paramDiffs()
	mathfn.Parallel(l.num, c.backwardPart)
	c.bottom, c.top, c.propagateDown = nil, nil, nil
	l.sumPartGradients(parts)
	return nil
}

func (l *convBase[T]) backwardPart(part, lo, hi int) {
	c := &l.cpu
	wdiff, bdiff := c.wdiffs[part], c.bdiffs[part]
	if part == 0 {
		wdiff, bdiff = c.blobW, c.blobB // the blobs' own (conv_grad_sum.go)
	} else {
		clear(wdiff)
		clear(bdiff)
	}
	if c.batch > 1 {
		l.backwardHostBatched(part, lo, hi, wdiff, bdiff)
		return
	}
	if c.chunk > 0 {
		l.backwardChunked(lo, hi, wdiff, bdiff, c.cols[part])
		return
	}
	if c.usePackedT || c.useTaps {
		l.backwardPacked(part, lo, hi, c.cols[part], wdiff, bdiff)
		return
	}
	backwardImages(l, serialHost[T]{device.Host[T](l.Context())}, c.top, c.propagateDown, c.bottom, lo, hi, c.cols[part], wdiff, bdiff)
}
