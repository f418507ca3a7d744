package vision

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "SPP",
		New32: newSPP[float32], New64: newSPP[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newSPPGPU[float32], newSPPGPU[float64])},
		ONNXWhy: "gocaffe writes no ONNX form of it",
	})
}

// SPP is spatial pyramid pooling (Caffe's SPPLayer): level l of
// spp_param.pyramid_height pools each channel into 2^l x 2^l bins (kernel
// ceil(size / bins), stride the kernel, the remainder padded around), and
// the levels' outputs are flattened and concatenated: the top is
// N x sum_l C*4^l. With pyramid_height 1 the top is the single pooling's
// output, N x C x 1 x 1. Pooling is spp_param.pool (MAX, AVE or
// STOCHASTIC), done by Pooling layers inside.
type sppLayer[T layer.Float] struct {
	layer.Base[T]
	height    int
	h, w      int // the bottom's spatial size the poolings were set up for
	pools     []layer.Layer[T]
	inputs    [][]*blob.Blob[T] // per level: a view of the bottom with its own diff
	outputs   [][]*blob.Blob[T] // per level: the pooling's top
	topShape  []int
	levelSize []int // per level: C * bins^2
}

func newSPP[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &sppLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.height = int(p.GetSppParam().GetPyramidHeight())
	if l.height < 1 {
		return nil, errors.New("spp_param.pyramid_height must be at least 1")
	}
	return l, nil
}

// Type returns "SPP".
func (*sppLayer[T]) Type() string { return "SPP" }

// Counts returns one bottom and one top.
func (*sppLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do: the poolings are built by Reshape for the
// bottom's size.
func (l *sppLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	l.h, l.w = -1, -1
	return nil
}

// poolingParam is Caffe's SPPLayer::GetPoolingParam for one level.
func (l *sppLayer[T]) poolingParam(level, h, w int) *caffepb.LayerParameter {
	bins := 1 << level
	kh, kw := int(math.Ceil(float64(h)/float64(bins))), int(math.Ceil(float64(w)/float64(bins)))
	ph, pw := (kh*bins-h+1)/2, (kw*bins-w+1)/2
	return &caffepb.LayerParameter{
		Name:  proto.String(fmt.Sprintf("%s_pool%d", l.Name(), level)),
		Type:  proto.String("Pooling"),
		Phase: l.Param().Phase,
		PoolingParam: &caffepb.PoolingParameter{
			Pool:    caffepb.PoolingParameter_PoolMethod(l.Param().GetSppParam().GetPool()).Enum(),
			KernelH: proto.Uint32(uint32(kh)), KernelW: proto.Uint32(uint32(kw)),
			StrideH: proto.Uint32(uint32(kh)), StrideW: proto.Uint32(uint32(kw)),
			PadH: proto.Uint32(uint32(ph)), PadW: proto.Uint32(uint32(pw)),
		},
	}
}

// build sets up one pooling per level for a bottom of h x w.
func (l *sppLayer[T]) build(bottom *blob.Blob[T], h, w int) error {
	l.pools, l.inputs, l.outputs, l.levelSize = nil, nil, nil, nil
	for level := range l.height {
		pool, err := layer.New[T](l.poolingParam(level, h, w))
		if err != nil {
			return fmt.Errorf("pyramid level %d: %w", level, err)
		}
		pool.LayerBase().SetContext(l.Context())
		pool.LayerBase().SetRNG(l.RNG())
		in, err := l.NewBlob()
		if err != nil {
			return err
		}
		out, err := l.NewBlob()
		if err != nil {
			return err
		}
		if err := in.ReshapeLike(bottom); err != nil {
			return err
		}
		l.pools = append(l.pools, pool)
		l.inputs = append(l.inputs, []*blob.Blob[T]{in})
		l.outputs = append(l.outputs, []*blob.Blob[T]{out})
		if err := in.ShareData(bottom); err != nil {
			return err
		}
		if err := layer.SetUp(pool, l.inputs[level], l.outputs[level]); err != nil {
			return fmt.Errorf("pyramid level %d: %w", level, err)
		}
		l.levelSize = append(l.levelSize, out.CountFrom(1))
	}
	l.h, l.w = h, w
	return nil
}

// Reshape (re)builds the poolings when the bottom's size changes and sizes
// the top.
func (l *sppLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() != 4 {
		return fmt.Errorf("SPP takes a 4-D bottom (N x C x H x W), got %s", b.ShapeString())
	}
	h, w := b.Shape()[2], b.Shape()[3]
	if h <= 0 || w <= 0 {
		return fmt.Errorf("input dimensions cannot be zero: %s", b.ShapeString())
	}
	if h != l.h || w != l.w {
		if err := l.build(b, h, w); err != nil {
			return err
		}
	}
	total := 0
	for level, pool := range l.pools {
		in := l.inputs[level][0]
		if err := in.ReshapeLike(b); err != nil {
			return err
		}
		if err := in.ShareData(b); err != nil {
			return err
		}
		if err := pool.Reshape(l.inputs[level], l.outputs[level]); err != nil {
			return err
		}
		l.levelSize[level] = l.outputs[level][0].CountFrom(1)
		total += l.levelSize[level]
	}
	if l.height == 1 {
		return top[0].ReshapeLike(l.outputs[0][0])
	}
	l.topShape = append(l.topShape[:0], b.Shape()[0], total)
	return top[0].Reshape(l.topShape)
}

// ForwardCPU pools every level and concatenates the flattened outputs on
// the host.
func (l *sppLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return sppForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU runs the levels' backward passes and sums their gradients on
// the host.
func (l *sppLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return sppBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

// sppForward runs the poolings (on their device) and copies each level's
// rows into the top's.
func sppForward[T layer.Float, A any](l *sppLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	num := bottom[0].Shape()[0]
	rowLen := top[0].Count() / max(num, 1)
	offset := 0
	for level, pool := range l.pools {
		if _, err := layer.Forward(pool, l.inputs[level], l.outputs[level]); err != nil {
			return err
		}
		out, y, size := d.Data(l.outputs[level][0]), d.MutableData(top[0]), l.levelSize[level]
		for n := range num {
			d.Copy(size, d.Offset(out, n*size), d.Offset(y, n*rowLen+offset))
		}
		offset += size
	}
	return d.Err()
}

// sppBackward splits the top's gradient by level, runs each pooling's
// backward and sums their bottom gradients.
func sppBackward[T layer.Float, A any](l *sppLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	num := bottom[0].Shape()[0]
	rowLen := top[0].Count() / max(num, 1)
	count := bottom[0].Count()
	d.Set(count, 0, d.MutableDiff(bottom[0]))
	offset := 0
	for level, pool := range l.pools {
		size := l.levelSize[level]
		dy, dout := d.Diff(top[0]), d.MutableDiff(l.outputs[level][0])
		for n := range num {
			d.Copy(size, d.Offset(dy, n*rowLen+offset), d.Offset(dout, n*size))
		}
		offset += size
		if err := d.Err(); err != nil {
			return err
		}
		if err := layer.Backward(pool, l.outputs[level], []bool{true}, l.inputs[level]); err != nil {
			return err
		}
		d.Axpy(count, 1, d.Diff(l.inputs[level][0]), d.MutableDiff(bottom[0]))
	}
	return d.Err()
}
