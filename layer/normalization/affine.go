package normalization

import (
	"math"

	"github.com/gocaffe/gocaffe/blob"
)

// BatchNorm and Scale as per-channel affine maps (layer.ChannelAffine), for
// an inference plan to fold into the convolution or inner product before
// them.

// Affine is BatchNorm with global statistics: y = (x - m)/sqrt(v + eps),
// m and v the running sums divided by the scale factor (0 for a factor of
// 0, as in Caffe), computed in float64. Training statistics are no map.
func (l *batchNormLayer[T]) Affine(bottom []int, scale, shift []float64) bool {
	if !l.useGlobal || len(l.Blobs()) < batchNormStats || len(bottom) < 2 || len(scale) != l.channels || bottom[1] != l.channels {
		return false
	}
	var f float64
	if s := float64(l.Blobs()[2].CPUData()[0]); s != 0 {
		f = 1 / s
	}
	mean, variance := l.Blobs()[0].CPUData(), l.Blobs()[1].CPUData()
	for c := range scale {
		// Caffe adds eps to the variance in T and takes the square root:
		// the same rounding here keeps the two nets' numbers closest.
		v := T(float64(variance[c])*f) + l.eps
		inv := 1 / math.Sqrt(float64(v))
		scale[c], shift[c] = inv, -float64(mean[c])*f*inv
	}
	return true
}

// AffineSources are the statistics.
func (l *batchNormLayer[T]) AffineSources() []*blob.Blob[T] { return l.Blobs() }

// Affine is Scale with its learned vector on axis 1 over one axis (and its
// bias): y = s[c]*x + b[c].
func (l *scaleLayer[T]) Affine(bottom []int, scale, shift []float64) bool {
	sp := l.Param().GetScaleParam()
	axis := int(sp.GetAxis())
	if axis < 0 {
		axis += len(bottom)
	}
	if len(l.Blobs()) == 0 || axis != 1 || len(bottom) < 2 || bottom[1] != len(scale) {
		return false
	}
	s := l.Blobs()[0]
	if s.NumAxes() != 1 || s.Count() != len(scale) {
		return false
	}
	// With a second bottom as the scale, Blobs() holds the bias alone: the
	// count of blobs tells (the net also checks the layer has one bottom).
	want := 1
	if sp.GetBiasTerm() {
		want = 2
	}
	if len(l.Blobs()) != want {
		return false
	}
	for c, v := range s.CPUData() {
		scale[c], shift[c] = float64(v), 0
	}
	if l.biasIndex >= 0 {
		for c, v := range l.Blobs()[l.biasIndex].CPUData() {
			shift[c] = float64(v)
		}
	}
	return true
}

// AffineSources are the scale and the bias.
func (l *scaleLayer[T]) AffineSources() []*blob.Blob[T] { return l.Blobs() }
