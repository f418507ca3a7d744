package layer

import "github.com/gocaffe/gocaffe/blob"

// Fuse lets layer a compute layer b, the next in its net, as part of its
// own passes where a's engine can, and reports whether it will. A net
// calls it for each pair of consecutive layers once they are set up.
//
// The pair fused today is BatchNorm followed by a Scale in place on its
// top (the Caffe ResNet and MobileNet pattern): cuDNN's batch
// normalization applies a per-channel scale and bias in the same pass and
// returns their gradients from its backward pass, so Scale's own passes
// over the activations (about a sixth of a ResNet-50 iteration) go. The
// fusion holds only while BatchNorm's cuDNN engine computes the pass
// (training statistics, a shape cuDNN takes) and the Scale's vector spans
// the channels: each pass checks, and otherwise both layers run as
// written. needBackward says whether the net runs a's backward pass, which
// must then compute b's parameter gradients; a pair whose first layer has
// no backward pass is not fused.
func Fuse[T Float](a, b Layer[T], aTop, bBottom, bTop []*blob.Blob[T], needBackward bool) bool {
	bn, ok := a.(*BatchNorm[T])
	if !ok || !needBackward {
		return false
	}
	s, ok := b.(*Scale[T])
	if !ok || len(bBottom) != 1 || len(bTop) != 1 || len(aTop) != 1 || bBottom[0] != aTop[0] || bTop[0] != bBottom[0] {
		return false
	}
	e, ok := bn.engine.(*batchNormDNN[T])
	if !ok {
		return false
	}
	e.scale, s.fusedInto = s, bn
	return true
}

// fusesScale says whether this pass of s is computed by BatchNorm l.
func (l *BatchNorm[T]) fusesScale(s *Scale[T]) bool {
	e, ok := l.engine.(*batchNormDNN[T])
	return ok && e.fusedScale() == s
}
