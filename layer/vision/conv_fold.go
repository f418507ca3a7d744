package vision

import (
	"errors"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// A convolution computing an inference plan's fold (layer.Folder): the
// BatchNorm and Scale after it folded into its weights and bias, its
// activation applied in the GEMM's epilogue. On the host only: the plan
// folds nets that run there.

// convFold is the folded state of a convolution. It holds the weights
// once, in the form its way reads (the im2col way's packed panels, or
// Winograd's transformed filters), computed straight from the layer's own
// with the fold's scale: never a folded copy beside them, which for a
// deploy ResNet-50 was 92 MB more. The layer's own blobs keep Caffe's
// values (a program reading them by name gets what it loaded).
type convFold[T layer.Float] struct {
	active bool
	// scale is the fold's factor of each output's weights; nil: 1.
	scale []float64
	// w are the folded weights where a way reads them whole (the
	// depthwise kernels): made by the first pass that takes it after
	// SetFold; nil otherwise.
	w  []T
	b  []T // folded bias; nil: none
	ep mathfn.Epilogue[T]
	// eps are the epilogues of each group's GEMM (their RowBias the
	// group's part of b), made once per SetFold so that passes allocate
	// nothing.
	eps []mathfn.Epilogue[T]
	// wep is the Winograd way's epilogue: ep with every output's bias
	// (that way's output transform covers all the groups at once).
	wep mathfn.Epilogue[T]
	// packed are each group's folded weights packed for the GEMM
	// kernels (mathfn.PackAScaled), made by the first im2col pass after
	// SetFold: a layer that always takes the Winograd way packs none.
	packed []*mathfn.PackedA[T]
	// winoOK says the fold may take the Winograd way (conv_winograd.go):
	// the layer fits it and the fold does not ask for none; wino is the
	// folded weights transformed for it, made by the first pass that
	// takes it after SetFold.
	winoOK bool
	wino   *mathfn.Winograd[T]
	// gen counts the SetFold calls: a lead convolution computing this
	// one's fold with its own (conv_siblings.go) remade its forms from
	// the fold of one generation.
	gen uint64
}

// foldTarget is what a folded im2col pass multiplies by and where it
// writes: each group's packed weights and epilogue, and per bottom its
// outputs, dim elements an image (the layer's tops, or a lead's outputs
// stacked with its siblings').
type foldTarget[T layer.Float] struct {
	packed []*mathfn.PackedA[T]
	eps    []mathfn.Epilogue[T]
	ys     [][]T
	dim    int
}

// FoldChannels is num_output for a convolution over axis 1 (not a
// deconvolution, whose output channels are the GEMM's columns).
func (l *convBase[T]) FoldChannels() int {
	if l.reverse || l.channelAxis != 1 {
		return 0
	}
	return l.numOutput
}

// FoldSources are the weights and bias.
func (l *convBase[T]) FoldSources() []*blob.Blob[T] { return l.Blobs() }

// SetFold folds f into the weights and bias (layer.Folder): the bias now,
// the weights by the first pass after (packFolded, winograd,
// foldedWeights), from the blob as it is then; the net calls SetFold
// again before any pass whose sources were written since.
func (l *convBase[T]) SetFold(f *layer.Fold) error {
	fo := &l.fold
	fo.gen++
	if f == nil {
		fo.active = false
		return nil
	}
	if l.FoldChannels() == 0 {
		return errors.New("a deconvolution or a convolution over another axis does not fold")
	}
	outs := l.numOutput
	fo.w, fo.scale = nil, nil
	if f.Scale != nil {
		fo.scale = append([]float64(nil), f.Scale[:outs]...)
	}
	fo.b = nil
	if l.biasTerm || f.Shift != nil {
		fo.b = make([]T, outs)
		var own []T
		if l.biasTerm {
			own = l.Blobs()[1].CPUData()
		}
		for o := range outs {
			v := 0.0
			if own != nil {
				v = float64(own[o])
			}
			if f.Scale != nil {
				v *= f.Scale[o]
			}
			if f.Shift != nil {
				v += f.Shift[o]
			}
			fo.b[o] = T(v)
		}
	}
	fo.ep = mathfn.Epilogue[T]{ReLU: f.Act.Kind == layer.ActReLU, Slope: T(f.Act.Slope)}
	fo.wep = fo.ep
	fo.wep.RowBias = fo.b
	kg := outs / l.group
	fo.eps = make([]mathfn.Epilogue[T], l.group)
	for g := range fo.eps {
		fo.eps[g] = fo.ep
		if fo.b != nil {
			fo.eps[g].RowBias = fo.b[g*kg : (g+1)*kg]
		}
	}
	// The weights' folded forms are made by the first pass that reads
	// them (a net folds once when it is built and again once weights are
	// loaded: packing at each would make the first forms garbage).
	clear(fo.packed)
	fo.packed = fo.packed[:0]
	l.setWinograd(f)
	fo.active = true
	return nil
}

// foldedWeights returns the weights the folded pass multiplies by, for
// the ways that read them whole (depthwise): the layer's own where the
// fold does not scale them, else a folded copy made on first use.
func (l *convBase[T]) foldedWeights() []T {
	fo := &l.fold
	if fo.scale == nil {
		return l.Blobs()[0].CPUData()
	}
	if fo.w == nil {
		w := l.Blobs()[0].CPUData()
		per := len(w) / l.numOutput
		fo.w = make([]T, len(w))
		for o, s := range fo.scale {
			for i, v := range w[o*per : (o+1)*per] {
				fo.w[o*per+i] = T(float64(v) * s)
			}
		}
	}
	return fo.w
}

// packFolded packs each group's folded weights for the im2col way, once
// per SetFold, from the layer's own weights and the fold's scale.
func (l *convBase[T]) packFolded() {
	fo := &l.fold
	if len(fo.packed) == l.group {
		return
	}
	w := l.Blobs()[0].CPUData()
	kg := l.numOutput / l.group
	fo.packed = fo.packed[:0]
	for g := range l.group {
		wg := w[l.weightOffset*g : l.weightOffset*(g+1)]
		if fo.scale == nil {
			// Unscaled: the products that read A unpacked (a 1x1
			// output's matrix-vector shape) read the layer's own.
			fo.packed = append(fo.packed, mathfn.PackA(blas.NoTrans, kg, l.kernelDim, wg))
			continue
		}
		fo.packed = append(fo.packed, mathfn.PackAScaled(kg, l.kernelDim, wg, fo.scale[g*kg:(g+1)*kg]))
	}
}

// forwardFolded is the host's forward pass of a fold: per image im2col
// (unless 1x1) and a GEMM per group with the bias and activation in its
// epilogue. A batch of one spreads each GEMM over the cores (by columns:
// output pixels); larger batches spread the images, as forwardCPU does.
// A convolution with siblings computes theirs in the same pass, and a
// sibling takes its tops from that (conv_siblings.go).
func (l *convBase[T]) forwardFolded(bottom, top []*blob.Blob[T]) error {
	if l.dwApplies() {
		return l.forwardDepthwise(bottom, top, l.foldedWeights(), l.fold.b, l.fold.ep)
	}
	if l.lead != nil && l.lead.handOff(l, bottom, top) {
		return nil
	}
	if l.sib != nil && l.siblingsReady(bottom) {
		return l.forwardMerged(bottom, top)
	}
	if l.fold.winoOK && l.winoWins(l.numOutput) {
		return l.forwardWinograd(bottom, top)
	}
	l.packFolded() // before the parts, which read it
	t := &l.cpu.target
	t.packed, t.eps, t.dim, t.ys = l.fold.packed, l.fold.eps, l.topDim, t.ys[:0]
	for _, b := range top {
		t.ys = append(t.ys, b.MutableCPUData())
	}
	l.foldedIm2col(bottom)
	return nil
}

// foldedIm2col runs the im2col way of a folded pass into l.cpu.target,
// whose outputs it then drops (they may be a net's arena, which the
// layer should not hold).
func (l *convBase[T]) foldedIm2col(bottom []*blob.Blob[T]) {
	parts := l.cpuParts()
	c := &l.cpu
	defer clear(c.target.ys)
	for _, b := range bottom {
		b.CPUData()
	}
	c.foldPanels = l.foldedPanelsApply()
	if c.foldPanels {
		l.foldedPanelBuffers(max(parts, 1))
	}
	if parts == 1 {
		// The columns from the net's shared scratch (layer.HostScratch),
		// not the layer's own col blob: a deploy ResNet-50's convolutions
		// held 40 MB of those, one each, for values that live within one
		// layer's pass. A 1x1 convolution reads its bottom as they, and
		// the products from padded images need none.
		var col []T
		if !l.is1x1 && !c.foldPanels {
			col = layer.ScratchOf(&l.Base, "conv.cols", 0, &c.col, l.kernelDim*l.group*l.convOutSpatial)
		}
		l.foldedImages(bottom, 0, 0, l.num, col, false)
		return
	}
	c.bottom = bottom
	if c.foldedPart == nil {
		c.foldedPart = l.foldedPart
	}
	mathfn.Parallel(l.num, c.foldedPart)
	c.bottom = nil
}

func (l *convBase[T]) foldedPart(part, lo, hi int) {
	l.foldedImages(l.cpu.bottom, part, lo, hi, l.cpu.cols[part], true)
}

// foldedImages computes images [lo, hi) of every bottom into l.cpu.target,
// in part's buffers; serial runs each GEMM on the calling goroutine.
func (l *convBase[T]) foldedImages(bottom []*blob.Blob[T], part, lo, hi int, col []T, serial bool) {
	t := &l.cpu.target
	for i := range bottom {
		in, out := bottom[i].CPUData(), t.ys[i]
		for n := lo; n < hi; n++ {
			x := in[n*l.bottomDim:]
			y := out[n*t.dim:]
			if l.cpu.foldPanels {
				l.foldedPanels(part, x, y, serial)
				continue
			}
			cols := x
			switch {
			case l.is1x1:
			case serial || l.geo.ColSize() < im2colParallelSize:
				mathfn.Im2col(x, &l.geo, col)
				cols = col
			default:
				l.im2colParallel(x, col)
				cols = col
			}
			for g := range l.group {
				mathfn.GemmPackedEpilogue(t.packed[g], blas.NoTrans, l.convOutSpatial, cols[l.colOffset*g:], y[l.outputOffset*g:], &t.eps[g], serial)
			}
		}
	}
}

// foldedPanelsApply reports whether a folded pass takes its products
// from padded copies of the images (mathfn.GemmConv, conv_panels.go)
// rather than im2col's columns: a 2-D kernel larger than 1x1 on this
// package's GEMM, more than one output position (one is a matrix-vector
// product, which reads the weights unpacked). At batch 1 on two cores
// (mathfn.BenchmarkConvPanels): GoogLeNet's conv1 (7x7, stride 2) 3.5 -> 2.1 ms,
// CaffeNet's conv1 (11x11, stride 4) 2.8 -> 1.7, a group of its conv2
// 2.0 -> 1.3.
func (l *convBase[T]) foldedPanelsApply() bool {
	return convPanels && !l.is1x1 && l.convOutSpatial > 1 && mathfn.ConvPanelsOK[T](&l.geo)
}

// foldedPanelBuffers sets c.geoG, a group's geometry, and gets the padded
// buffers of parts parts (one image's group each) from the net's
// scratch, on the pass's goroutine.
func (l *convBase[T]) foldedPanelBuffers(parts int) {
	c := &l.cpu
	c.geoG = l.geo
	c.geoG.Channels = l.geo.Channels / l.group
	n := mathfn.ConvPanelsSize(&c.geoG, 1)
	for p := range parts {
		c.paddeds[p] = layer.ScratchOf(&l.Base, "conv.padded", p, &c.paddeds[p], n)
	}
}

// foldedPanels computes image x's products into y, group by group, from
// a padded copy of the group's channels in part's buffer: split over the
// cores unless serial.
func (l *convBase[T]) foldedPanels(part int, x, y []T, serial bool) {
	c := &l.cpu
	t := &c.target
	p := c.panels[part]
	plane := l.bottomDim / l.geo.Channels
	for g := range l.group {
		p.Reset(&c.geoG, 1, c.paddeds[part])
		p.SetImage(0, x[g*c.geoG.Channels*plane:])
		out := y[l.outputOffset*g:] // a lead's stacked rows with its siblings' (one group)
		if serial {
			mathfn.GemmConv(t.packed[g], p, out, &t.eps[g])
		} else {
			mathfn.GemmConvParallel(t.packed[g], p, out, &t.eps[g])
		}
	}
}

// im2colParallelSize is the least number of columns' elements that
// im2colParallel splits over the cores: below it, waking the other
// goroutines costs more than they save (GoogLeNet's inception layers at
// 14x14 and 7x7).
const im2colParallelSize = 1 << 18

// im2colParallel is Im2col of one image split over the cores: at batch 1
// the GEMMs after it are split over them, and a serial im2col left all but
// one idle (GoogLeNet's conv2/3x3 writes 7 MB of columns). A 2-D geometry
// is cut into each channel's kernel rows (mathfn.Im2colPart), in chunks
// the goroutines claim: by channels, GoogLeNet's conv1 (3 channels) gave
// one core two of them.
func (l *convBase[T]) im2colParallel(x, col []T) {
	c := &l.cpu
	if c.im2colPart == nil {
		c.im2colPart = l.im2colPart
	}
	c.imX, c.imCol = x, col
	if l.geo.Batchable() {
		mathfn.ParallelChunks(l.geo.Im2colUnits(), c.im2colPart)
	} else {
		parts := mathfn.Parts(l.geo.Channels)
		for len(c.imGeos) < parts {
			c.imGeos = append(c.imGeos, mathfn.ConvGeometry{})
		}
		mathfn.Parallel(l.geo.Channels, c.im2colPart)
	}
	c.imX, c.imCol = nil, nil
}

// im2colPart computes the columns of pieces [lo, hi): of 2-D geometries
// the column rows mathfn.Im2colPart gives them; else channels [lo, hi),
// Im2col of those channels' planes, whose columns are rows lo*kernel.. of
// the whole.
func (l *convBase[T]) im2colPart(part, lo, hi int) {
	c := &l.cpu
	if l.geo.Batchable() {
		mathfn.Im2colPart(c.imX, &l.geo, c.imCol, lo, hi)
		return
	}
	g := &c.imGeos[part]
	*g = l.geo
	g.Channels = hi - lo
	plane, rows := l.geo.ImSize()/l.geo.Channels, l.geo.ColSize()/l.geo.Channels
	mathfn.Im2col(c.imX[lo*plane:], g, c.imCol[lo*rows:])
}
