package normalization

import (
	"errors"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// LRN on cuDNN in a 16-bit type (layer.ReducedEngine): cuDNN normalizes
// FLOAT16 values, computing in float. It has no BFLOAT16 LRN: cuDNN 9 on
// the H100 answers CUDNN_STATUS_NOT_SUPPORTED, so a bf16 net keeps its
// LRN layers in FP32.

// SetReduced makes the cuDNN engine normalize in s.
func (e *lrnDNN[T]) SetReduced(s syncedmem.Storage) error {
	if s == syncedmem.StorageBFloat16 {
		return errors.New("cuDNN's LRN takes FLOAT16, not BFLOAT16")
	}
	if err := e.red.SetReduced(e.l.Context(), s); err != nil {
		return err
	}
	e.x.Dims = e.x.Dims[:0] // described again in the new type
	return nil
}

func (e *lrnDNN[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	g := e.l.GPU()
	r := &e.red
	if err := e.x.SetAs(r.DNNType(), e.l.num, e.l.channels, e.l.height, e.l.width); err != nil {
		return err
	}
	r.Begin()
	x, err := r.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := r.Out(g, top[0], false)
	if err != nil {
		return err
	}
	if err := e.dnn.LRNForward(e.desc, e.x.Desc, x, e.x.Desc, y); err != nil {
		return err
	}
	if err := r.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

func (e *lrnDNN[T]) backwardReduced(top, bottom []*blob.Blob[T]) error {
	g := e.l.GPU()
	r := &e.red
	r.Begin()
	y, err := r.In(g, top[0], false)
	if err != nil {
		return err
	}
	dy, err := r.In(g, top[0], true)
	if err != nil {
		return err
	}
	x, err := r.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	dx, err := r.Out(g, bottom[0], true)
	if err != nil {
		return err
	}
	if err := e.dnn.LRNBackward(e.desc, e.x.Desc, y, e.x.Desc, dy, e.x.Desc, x, e.x.Desc, dx); err != nil {
		return err
	}
	if err := r.Done(g, bottom[0], true); err != nil {
		return err
	}
	return g.Err()
}
