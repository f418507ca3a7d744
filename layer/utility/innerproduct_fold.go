package utility

import (
	"errors"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/sysmem"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// An inner product computing an inference plan's fold (layer.Folder): the
// per-output affine maps after it folded into copies of its weights and
// bias, the bias and activation applied in the GEMM's epilogue. On the
// host only.

// ipFold is the folded state of an inner product.
type ipFold[T layer.Float] struct {
	active bool
	w      []T // folded weights; nil: the layer's own
	ep     mathfn.Epilogue[T]
	// huge says the weights the pass reads were offered huge pages
	// (sysmem.HugePages) since SetFold: by the first pass, so that a net
	// built and never run, or folded twice while it loads, pays nothing.
	huge bool
}

// FoldChannels is num_output where the top is (batch, num_output), the
// output channels on axis 1: axis 1.
func (l *innerProductLayer[T]) FoldChannels() int {
	if l.Param().GetInnerProductParam().GetAxis() != 1 || len(l.Blobs()) == 0 {
		return 0
	}
	return l.numOutput
}

// FoldSources are the weights and bias.
func (l *innerProductLayer[T]) FoldSources() []*blob.Blob[T] { return l.Blobs() }

// SetFold folds f into copies of the weights and bias (layer.Folder).
func (l *innerProductLayer[T]) SetFold(f *layer.Fold) error {
	fo := &l.fold
	if f == nil {
		fo.active = false
		return nil
	}
	if l.FoldChannels() == 0 {
		return errors.New("an inner product over an axis other than 1 does not fold")
	}
	n, k := l.numOutput, l.k
	w := l.Blobs()[0].CPUData()
	fo.w = nil
	if f.Scale != nil {
		fo.w = make([]T, len(w))
		for i, v := range w {
			o := i / k // N x K: output o's row
			if l.transpose {
				o = i % n // K x N: output o's column
			}
			fo.w[i] = T(float64(v) * f.Scale[o])
		}
	}
	var b []T
	if l.biasTerm || f.Shift != nil {
		b = make([]T, n)
		var own []T
		if l.biasTerm {
			own = l.Blobs()[1].CPUData()
		}
		for o := range b {
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
			b[o] = T(v)
		}
	}
	fo.ep = mathfn.Epilogue[T]{ColBias: b, ReLU: f.Act.Kind == layer.ActReLU, Slope: T(f.Act.Slope)}
	fo.huge = false
	fo.active = true
	return nil
}

// forwardFolded is the host's forward pass of a fold: one GEMM with the
// bias and activation in its epilogue. The first pass offers the weights
// huge pages: at a small batch the product is a stream of them from
// memory (CaffeNet's fc6 151 MB a pass), which on 4 KiB pages ran at
// two thirds of the rate on 2 MiB ones.
func (l *innerProductLayer[T]) forwardFolded(bottom, top []*blob.Blob[T]) error {
	w := l.fold.w
	if w == nil {
		w = l.Blobs()[0].CPUData()
	}
	if !l.fold.huge {
		sysmem.HugePages(w)
		l.fold.huge = true
	}
	mathfn.GemmEpilogue(blas.NoTrans, l.weightTrans(), l.m, l.numOutput, l.k, 1, bottom[0].CPUData(), w, 0, top[0].MutableCPUData(), &l.fold.ep)
	return nil
}
