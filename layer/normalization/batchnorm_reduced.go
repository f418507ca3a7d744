package normalization

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// BatchNorm's cuDNN engine in a 16-bit type (layer.ReducedEngine): the own
// kernels read and write x, y, dy and dx in FLOAT16 or BFLOAT16 and
// compute in float, with the statistics, the running sums, the fused
// Scale's parameters and their gradients in FP32, as NVCaffe and
// PyTorch's autocast keep batch normalization. ResNet-50 and MobileNet
// put a BatchNorm after every convolution: with an FP32 path alone, each
// of their convolutions converted its output and input, or the whole net
// stayed in FP32.

// errBNReducedCuDNN: cuDNN's batch normalization is not given 16-bit
// blobs here.
var errBNReducedCuDNN = errors.New("cuDNN's batch normalization (the BatchNorm setting cudnn) has no 16-bit path here; the own kernels (the default) have")

// SetReduced makes the engine compute in s (StorageNative: T again).
func (e *batchNormDNN[T]) SetReduced(s syncedmem.Storage) error {
	if s.Reduced() && e.own == nil {
		return errBNReducedCuDNN
	}
	return e.red.SetReduced(e.l.Context(), s)
}

// forwardReduced is Forward in the 16-bit type: as Forward on the own
// kernels, the blobs through e.red (a blob stored in the type is used in
// place, another converted at the pass's edge). In place, the blob must
// be stored in the type (the plan stores it so where every layer touching
// it computes in the type, and drops a layer with no 16-bit blob back to
// FP32), and the scratch blob that takes y holds the type's values too.
func (e *batchNormDNN[T]) forwardReduced(bottom, top []*blob.Blob[T]) error {
	l, g := e.l, e.l.GPU()
	inPlace := bottom[0] == top[0]
	if inPlace && top[0].Storage() != e.red.Storage() {
		return fmt.Errorf("layer %s: in place on blob stored in %v, not %v", l.Name(), top[0].Storage(), e.red.Storage())
	}
	e.red.Begin()
	x, err := e.red.In(g, bottom[0], false)
	if err != nil {
		return err
	}
	y, err := e.red.Out(g, top[0], false)
	if err != nil {
		return err
	}
	swap := false
	if inPlace && e.keepsX() {
		// As Forward: y goes to the scratch blob, whose memory the top
		// takes, or x is copied aside when they are still exchanged.
		if swap = !e.exchanged && e.saved.Data().Storage() == top[0].Data().Storage(); swap {
			y = g.MutableData(e.saved)
		} else {
			saved := g.MutableData(e.saved) // at least 2 bytes a value in any storage
			if err := g.Err(); err != nil {
				return err
			}
			if err := e.red.Copy(bottom[0].Count(), x, saved); err != nil {
				return err
			}
			x = saved
		}
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := e.forwardOwn(g, x, y); err != nil {
		return err
	}
	if swap {
		if err := e.exchange(); err != nil {
			return err
		}
	}
	if err := e.red.Done(g, top[0], false); err != nil {
		return err
	}
	return g.Err()
}

// backwardReduced is backwardOwn in the 16-bit type. The fused Scale's
// gradients go to its FP32 diffs; with a fused Scale the layer is in place
// (fusedScale), so no top diff is left to scale.
func (e *batchNormDNN[T]) backwardReduced(s *scaleLayer[T], top *blob.Blob[T], propagate bool, bottom *blob.Blob[T]) error {
	g := e.l.GPU()
	e.red.Begin()
	dy, err := e.red.In(g, top, true)
	if err != nil {
		return err
	}
	x := dy // not read
	if e.keepsX() {
		if bottom == top {
			x = g.Data(e.saved) // x is in the scratch blob (forwardReduced)
		} else if x, err = e.red.In(g, bottom, false); err != nil {
			return err
		}
	}
	var dx cuda.DevicePtr
	if propagate {
		if dx, err = e.red.Out(g, bottom, true); err != nil {
			return err
		}
	}
	dGamma, dBeta := s.paramDiffs(g)
	if err := g.Err(); err != nil {
		return err
	}
	if err := e.gradOwn(g, dy, x, dx, dGamma, dBeta); err != nil {
		return err
	}
	if propagate {
		if err := e.red.Done(g, bottom, true); err != nil {
			return err
		}
	}
	return g.Err()
}

// AcceptsChannelsLast: the own kernels read channels-last blobs 8
// channels at a time (layer.ChannelsLastEngine).
func (e *batchNormDNN[T]) AcceptsChannelsLast() bool {
	return e.own != nil && e.red.On() && e.l.channels%bnClVector == 0
}

// SetChannelsLast makes the own kernels read and write channels-last
// blobs; the next Reshape sizes their scratch for it.
func (e *batchNormDNN[T]) SetChannelsLast(on bool) error {
	if on && !e.AcceptsChannelsLast() {
		return fmt.Errorf("channels-last needs the own kernels in 16 bits and channels in eights, not %d", e.l.channels)
	}
	return e.red.SetChannelsLast(on)
}
