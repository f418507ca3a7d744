package vision

import (
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// The host's passes without a column buffer (mathfn.GemmConv): the GEMM
// packs its panels straight from zero-padded copies of the images. For
// CIFAR-10 quick's 5x5 layers (25 taps a value) im2col's columns and the
// GEMM's packing of them were a third of the forward pass.
//
// The forward pass computes the same products as with im2col, bit for bit.
// The bottom gradient of a stride-1 convolution is itself a convolution:
// of the top gradient, zero-padded by dilation*(kernel-1) - pad, with the
// weights flipped in space and their two channel axes swapped, so that it
// takes GemmConv too, written straight into the bottom's gradient, instead
// of a product into the columns (k = the output channels only: all loads
// and stores) and col2im's sums of them. Its sums run in another order
// (within rounding).

// The weight gradient's product, dy * im2col(x)^T, packs its B~ panels
// from the padded images too (mathfn.GemmConvTaps): each panel's taps
// along a block's positions, copied into a small buffer in the cache, then
// transposed into the panel as packB would have transposed the columns.
// The same products, bit for bit. Where the CPU has its kernel and the
// output rows are whole vectors (or pairs of halves), the product is
// instead taken as dot products along the positions, straight from the
// padded images (mathfn.GemmConvTapsDot: no transposition; the same sums
// in another order, within rounding): CIFAR-10 quick at batch 100 on the
// 2-vCPU Zen 4 EPYC, 54.6 -> 45.0 ms a pass (medians of 60).

// convPanels turns the passes without a column buffer off for tests
// (SetConvPanels).
var convPanels = true

// panelsForward reports whether the forward pass in progress (weights
// packed, usePacked) takes GemmConv: a 2-D convolution with a kernel
// larger than 1x1 (whose products read the image itself).
func (l *convBase[T]) panelsForward() bool {
	return convPanels && l.cpu.usePacked && !l.is1x1 && mathfn.ConvPanelsOK[T](&l.geo)
}

// panelsBackward reports whether the backward pass's bottom gradient can
// be the convolution of the top gradient (panelsGeometry): one group, no
// deconvolution, whole images, the default GEMM, stride 1, a pad no
// larger than the kernel's extent less one, and a bottom image no larger
// than its columns (only a kernel dilated past the top's size has a
// larger one; the batched pass's products go through the column buffer).
func (l *convBase[T]) panelsBackward() bool {
	if !convPanels || l.reverse || l.group != 1 || l.is1x1 || l.cpu.chunk != 0 || len(l.kernel) != 2 ||
		device.Host[T](l.Context()).GEMM() != settings.GEMMAuto {
		return false
	}
	for i := range l.kernel {
		if l.stride[i] != 1 || l.pad[i] > l.dilation[i]*(l.kernel[i]-1) {
			return false
		}
	}
	if l.bottomDim > l.kernelDim*l.convOutSpatial {
		return false
	}
	l.panelsGeometry()
	return mathfn.ConvPanelsOK[T](&l.cpu.geoT)
}

// panelsGeometry sets c.geoT to the bottom gradient's convolution: the
// top gradient's numOutput channels in, the bottom's spatial shape out.
func (l *convBase[T]) panelsGeometry() {
	c := &l.cpu
	g := &c.geoT
	g.Channels, g.ForceND = l.numOutput, l.geo.ForceND
	g.In, g.Out = append(g.In[:0], l.geo.Out...), append(g.Out[:0], l.geo.In...)
	g.Kernel, g.Stride, g.Dilation = l.kernel, l.stride, l.dilation
	g.Pad = g.Pad[:0]
	for i := range l.kernel {
		g.Pad = append(g.Pad, l.dilation[i]*(l.kernel[i]-1)-l.pad[i])
	}
}

// packFlipped packs the bottom gradient's weights into c.packed: the
// channels x numOutput*kernel matrix whose row ci holds, at output channel
// co's kernel place (kh, kw), the weight of co and ci at (kh', kw') =
// (Kernel-1-kh, Kernel-1-kw), packed straight from the weights
// (mathfn.PackConvFlippedIn: the kernel places reversed are the places
// (kh', kw') in row-major order).
func (l *convBase[T]) packFlipped() {
	c := &l.cpu
	kk := l.kernel[0] * l.kernel[1]
	cin, cout := l.channels, l.numOutput
	blocks := layer.ScratchOf(&l.Base, "conv.packed", 0, &c.packedBlocks, mathfn.PackedASize[T](cin, cout*kk))
	c.packed = mathfn.PackConvFlippedIn(c.packed, cin, cout, kk, l.Blobs()[0].CPUData(), blocks)
}

// panelsOf returns part's ConvPanels over images images of geometry g
// (at most the pass's batch), in the padded buffer panelBuffers got it.
func (l *convBase[T]) panelsOf(part int, g *mathfn.ConvGeometry, images int) *mathfn.ConvPanels[T] {
	c := &l.cpu
	c.panels[part].Reset(g, images, c.paddeds[part])
	return c.panels[part]
}

// panelBuffers gets the padded buffers of parts parts from the net's
// scratch for the pass in progress, on the pass's goroutine (the scratch
// is not safe for the parts to ask at once): c.batch images of the
// forward geometry, or where the bottom gradient takes the flipped
// weights (useFlipped) of its geometry too.
func (l *convBase[T]) panelBuffers(parts int) {
	c := &l.cpu
	n := mathfn.ConvPanelsSize(&l.geo, c.batch)
	if c.useFlipped {
		n = max(n, mathfn.ConvPanelsSize(&c.geoT, c.batch))
	}
	for p := range parts {
		c.paddeds[p] = layer.ScratchOf(&l.Base, "conv.padded", p, &c.paddeds[p], n)
	}
}

// convProduct is mathfn.GemmConv without an epilogue, by
// mathfn.GemmConvDirect where it applies (output rows of whole vectors):
// the same products without packing the columns. CIFAR-10 quick's conv2
// product on one Zen 4 core: 92 -> 113 GFLOP/s.
func convProduct[T layer.Float](pa *mathfn.PackedA[T], p *mathfn.ConvPanels[T], c []T) {
	if !mathfn.GemmConvDirect(pa, p, c) {
		mathfn.GemmConv(pa, p, c, nil)
	}
}

// forwardPanels is the image-by-image forward product of image x into out
// (GemmConv).
func (l *convBase[T]) forwardPanels(part int, x, out []T) {
	p := l.panelsOf(part, &l.geo, 1)
	p.SetImage(0, x)
	convProduct(l.cpu.packed, p, out)
}

// backwardPanels writes the bottom gradient of images [n0, n0+images) of
// dy (the top gradient) into dx: the products of the flipped weights
// (packFlipped) and the top gradients' columns, one for the images side by
// side, through buf (channels x images*positions) where there are several.
func (l *convBase[T]) backwardPanels(part int, dy, dx, buf []T, n0, images int) {
	c := &l.cpu
	p := l.panelsOf(part, &c.geoT, images)
	for j := range images {
		p.SetImage(j, dy[(n0+j)*l.topDim:])
	}
	if images == 1 {
		convProduct(c.packed, p, dx[n0*l.bottomDim:(n0+1)*l.bottomDim])
		return
	}
	hw := l.bottomDim / l.channels
	ld := images * hw
	buf = buf[:l.channels*ld]
	convProduct(c.packed, p, buf)
	for j := range images {
		out := dx[(n0+j)*l.bottomDim:]
		for ch := range l.channels {
			copy(out[ch*hw:(ch+1)*hw], buf[ch*ld+j*hw:ch*ld+(j+1)*hw])
		}
	}
}

// panelsWeights reports whether the backward pass in progress takes the
// weight gradient's products from the padded images (GemmConvTaps): as
// panelsForward, with a stride of 1 along the rows, whole images and the
// gradient wanted.
func (l *convBase[T]) panelsWeights() bool {
	return convPanels && !l.reverse && l.group == 1 && !l.is1x1 && l.cpu.chunk == 0 && l.ParamPropagateDown(0) &&
		device.Host[T](l.Context()).GEMM() == settings.GEMMAuto && mathfn.TapsOK[T](&l.geo)
}

// weightPanels adds the weight gradient of images [n0, n0+images) of x to
// wdiff, dyB their top gradients (numOutput rows ld apart).
func (l *convBase[T]) weightPanels(part int, x, dyB []T, ld int, wdiff []T, n0, images int) {
	p := l.panelsOf(part, &l.geo, images)
	for j := range images {
		p.SetImage(j, x[(n0+j)*l.bottomDim:])
	}
	if !mathfn.GemmConvTapsDot(l.numOutput, dyB, ld, p, wdiff) {
		mathfn.GemmConvTaps(l.numOutput, dyB, ld, p, wdiff)
	}
}

// panelSlots makes the ConvPanels of parts parts, on the pass's goroutine
// (the parts run at once).
func (l *convBase[T]) panelSlots(parts int) {
	c := &l.cpu
	for len(c.panels) < parts {
		c.panels = append(c.panels, new(mathfn.ConvPanels[T]))
		c.paddeds = append(c.paddeds, nil)
	}
}
