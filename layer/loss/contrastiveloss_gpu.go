package loss

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

// contrastiveLossGPU is ContrastiveLoss's GPU half.
type contrastiveLossGPU[T layer.Float] struct{ l *contrastiveLossLayer[T] }

func newContrastiveLossGPU[T layer.Float](l *contrastiveLossLayer[T]) layer.Engine[T] {
	return contrastiveLossGPU[T]{l}
}

// Forward computes the pairs' squared distances on the device; the N
// distances come to the host for the loss, as in Caffe.
func (e contrastiveLossGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	num := bottom[0].Shape()[0]
	c := bottom[0].Count() / num
	for _, b := range []**blob.Blob[T]{&l.gdiff, &l.gdiffSq, &l.gdistSq} {
		if *b == nil {
			nb, err := l.NewBlob()
			if err != nil {
				return err
			}
			*b = nb
		}
	}
	if err := l.gdiff.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if err := l.gdiffSq.ReshapeLike(bottom[0]); err != nil {
		return err
	}
	if err := l.gdistSq.Reshape([]int{num}); err != nil {
		return err
	}
	if err := kit.Ones(l, &l.ones, c); err != nil {
		return err
	}
	g := l.GPU()
	n := bottom[0].Count()
	g.Sub(n, g.Data(bottom[0]), g.Data(bottom[1]), g.MutableData(l.gdiff))
	g.Mul(n, g.Data(l.gdiff), g.Data(l.gdiff), g.MutableData(l.gdiffSq))
	g.Gemv(blas.NoTrans, num, c, 1, g.Data(l.gdiffSq), g.Data(l.ones), 0, g.MutableData(l.gdistSq))
	if err := g.Err(); err != nil {
		return err
	}
	for i, v := range l.gdistSq.CPUData() {
		l.distSq[i] = float64(v)
	}
	top[0].MutableCPUData()[0] = T(l.loss(l.distSq, bottom[2].CPUData()))
	return nil
}

// Backward computes both feature blobs' gradients on the device.
func (e contrastiveLossGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if propagateDown[2] {
		return errors.New("ContrastiveLoss layer cannot backpropagate to similarity label inputs")
	}
	g := l.GPU()
	num := bottom[0].Shape()[0]
	n := bottom[0].Count()
	legacy := 0
	if l.legacy {
		legacy = 1
	}
	for k, sign := range []T{1, -1} {
		if !propagateDown[k] {
			continue
		}
		alpha := sign * top[0].CPUDiff()[0] / T(num)
		var a cuda.Args
		kit.ScalarArg(a.Int(n).Int(n/num), T(l.margin)).Int(legacy)
		kit.ScalarArg(&a, alpha).Ptr(g.Data(bottom[2])).Ptr(g.Data(l.gdiff)).Ptr(g.Data(l.gdistSq)).Ptr(g.MutableDiff(bottom[k]))
		if err := launch[T](l.Context(), "contrastive_loss.cu", "contrastive_loss_backward", n, &a); err != nil {
			return err
		}
	}
	return nil
}
