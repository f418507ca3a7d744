package loss

import (
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// innerSoftmax is the Softmax a softmax loss (SoftmaxWithLoss,
// InfogainLoss) computes its probabilities with, made through the registry
// as Caffe's losses make theirs, and the geometry of its axis: the scores
// are outer x channels x inner.
type innerSoftmax[T layer.Float] struct {
	softmax                layer.Layer[T]
	prob                   *blob.Blob[T]
	probTop                []*blob.Blob[T] // {prob}: the softmax's top list, made once
	outer, channels, inner int
}

// makeSoftmax makes the Softmax of the loss layer p along sp's axis.
func (s *innerSoftmax[T]) makeSoftmax(p *caffepb.LayerParameter, sp *caffepb.SoftmaxParameter) error {
	q := proto.Clone(p).(*caffepb.LayerParameter)
	q.Type, q.Blobs, q.LossWeight, q.SoftmaxParam = proto.String("Softmax"), nil, nil, sp
	sm, err := layer.New[T](q)
	if err != nil {
		return err
	}
	s.softmax = sm
	return nil
}

// setUpSoftmax sets the Softmax up on the loss layer's device (b), over the
// scores.
func (s *innerSoftmax[T]) setUpSoftmax(b *layer.Base[T], scores *blob.Blob[T]) error {
	s.softmax.LayerBase().SetContext(b.Context())
	var err error
	if s.prob, err = b.NewBlob(); err != nil {
		return err
	}
	s.probTop = []*blob.Blob[T]{s.prob}
	return layer.SetUp[T](s.softmax, []*blob.Blob[T]{scores}, s.probTop)
}

// reshapeSoftmax reshapes the Softmax for the scores and resolves the
// geometry along axis (the loss parameter's, negative from the end).
func (s *innerSoftmax[T]) reshapeSoftmax(scores *blob.Blob[T], axis int) error {
	if err := s.softmax.Reshape([]*blob.Blob[T]{scores}, s.probTop); err != nil {
		return err
	}
	a, err := scores.CanonicalAxisIndex(axis)
	if err != nil {
		return err
	}
	s.outer, s.channels, s.inner = scores.CountRange(0, a), scores.Shape()[a], scores.CountFrom(a+1)
	return nil
}
