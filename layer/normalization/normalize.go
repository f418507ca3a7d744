package normalization

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Normalize",
		New32: newNormalize[float32], New64: newNormalize[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newNormalizeGPU[float32], newNormalizeGPU[float64])},
		ONNX:     layer.ONNXConverted,
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// Normalize is SSD's L2 normalization (weiliu89/caffe; norm_param):
// y = s * x / sqrt(sum(x^2) + eps), the sum over each image's channels at
// each spatial position, or over the whole image with across_spatial, and
// s a learned scale per channel, or one for all with channel_shared (a blob
// of no axes, as SSD stores it). SSD's conv4_3_norm starts the scale at 20
// (scale_filler); without a filler it starts at 1.
type normalizeLayer[T layer.Float] struct {
	layer.Base[T]
	acrossSpatial, shared bool
	eps                   float64
	num, channels, dim    int // dim: the elements of one image
	spatial               int
	norm                  []T // per image (across_spatial) or per image and position
	sums                  []float64
	dots                  []T
}

func newNormalize[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &normalizeLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	np := p.GetNormParam()
	l.acrossSpatial, l.shared, l.eps = np.GetAcrossSpatial(), np.GetChannelShared(), float64(np.GetEps())
	return l, nil
}

// Type returns "Normalize".
func (*normalizeLayer[T]) Type() string { return "Normalize" }

// Counts: one bottom, one top.
func (*normalizeLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp creates the scale, or checks the one loaded.
func (l *normalizeLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if bottom[0].NumAxes() < 2 {
		return fmt.Errorf("bottom %s needs at least 2 axes (num, channels, ...)", bottom[0].ShapeString())
	}
	want := bottom[0].Shape()[1]
	if l.shared {
		want = 1
	}
	if len(l.Blobs()) > 0 {
		if n := l.Blobs()[0].Count(); len(l.Blobs()) != 1 || n != want {
			return fmt.Errorf("scale size is inconsistent with prototxt config: %d values, want %d (channel_shared %v)", n, want, l.shared)
		}
		return nil
	}
	fp := l.Param().GetNormParam().GetScaleFiller()
	if fp == nil {
		fp = &caffepb.FillerParameter{Type: proto.String("constant"), Value: proto.Float32(1)}
	}
	s, err := l.NewParamBlob(fp, want)
	if err != nil {
		return fmt.Errorf("scale filler: %w", err)
	}
	if l.shared {
		if err := s.Reshape([]int{}); err != nil {
			return err
		}
	}
	l.AddBlob(s)
	return nil
}

// Reshape gives the top the bottom's shape.
func (l *normalizeLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() < 2 {
		return fmt.Errorf("bottom %s needs at least 2 axes (num, channels, ...)", b.ShapeString())
	}
	l.num, l.channels, l.spatial = b.Shape()[0], b.Shape()[1], b.CountFrom(2)
	if !l.shared && l.channels != l.Blobs()[0].Count() {
		return fmt.Errorf("bottom has %d channels, the scale %d", l.channels, l.Blobs()[0].Count())
	}
	l.dim = l.channels * l.spatial
	n := l.num * l.spatial
	if l.acrossSpatial {
		n = l.num
	}
	l.norm, l.sums, l.dots = kit.Grow(l.norm, n), kit.Grow(l.sums, n), kit.Grow(l.dots, n)
	return top[0].ReshapeLike(b)
}

// group returns the norm index of element j (c, p) of image i.
func (l *normalizeLayer[T]) group(i, p int) int {
	if l.acrossSpatial {
		return i
	}
	return i*l.spatial + p
}

// scaleOf returns channel c's scale.
func (l *normalizeLayer[T]) scaleOf(s []T, c int) T {
	if l.shared {
		return s[0]
	}
	return s[c]
}

// ForwardCPU computes the norms and the scaled, normalized output.
func (l *normalizeLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y, s := bottom[0].CPUData(), top[0].MutableCPUData(), l.Blobs()[0].CPUData()
	sums := l.sums
	clear(sums)
	for i := range l.num {
		for c := range l.channels {
			for p := range l.spatial {
				v := float64(x[i*l.dim+c*l.spatial+p])
				sums[l.group(i, p)] += v * v
			}
		}
	}
	for g, v := range sums {
		l.norm[g] = T(math.Sqrt(v + l.eps))
	}
	for i := range l.num {
		for c := range l.channels {
			for p := range l.spatial {
				j := i*l.dim + c*l.spatial + p
				y[j] = l.scaleOf(s, c) * x[j] / l.norm[l.group(i, p)]
			}
		}
	}
	return nil
}

// BackwardCPU: with n the norm of x's group and s its channel's scale,
// dx = s*dy/n - x * sum_group(s*dy*x) / n^3 and ds = sum(dy * x / n) over
// the scale's elements.
func (l *normalizeLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	x, dy, s := bottom[0].CPUData(), top[0].CPUDiff(), l.Blobs()[0].CPUData()
	if l.ParamPropagateDown(0) {
		ds := l.Blobs()[0].MutableCPUDiff()
		for i := range l.num {
			for c := range l.channels {
				var sum T
				for p := range l.spatial {
					j := i*l.dim + c*l.spatial + p
					sum += dy[j] * x[j] / l.norm[l.group(i, p)]
				}
				if l.shared {
					ds[0] += sum
				} else {
					ds[c] += sum
				}
			}
		}
	}
	if !propagateDown[0] {
		return nil
	}
	dots := l.dots
	clear(dots)
	for i := range l.num {
		for c := range l.channels {
			for p := range l.spatial {
				j := i*l.dim + c*l.spatial + p
				dots[l.group(i, p)] += l.scaleOf(s, c) * dy[j] * x[j]
			}
		}
	}
	dx := bottom[0].MutableCPUDiff()
	for i := range l.num {
		for c := range l.channels {
			for p := range l.spatial {
				j, g := i*l.dim+c*l.spatial+p, l.group(i, p)
				n := l.norm[g]
				dx[j] = l.scaleOf(s, c)*dy[j]/n - x[j]*dots[g]/(n*n*n)
			}
		}
	}
	return nil
}
