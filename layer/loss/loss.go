package loss

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"

	// SoftmaxWithLoss and InfogainLoss build their Softmax through the
	// registry, as Caffe's do: the utility layers register it.
	_ "github.com/gocaffe/gocaffe/layer/utility"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// normalization resolves a loss layer's normalization mode: the
// normalization field if set, else the legacy normalize flag (true: VALID,
// false: BATCH_SIZE), else def.
func normalization(lp *caffepb.LossParameter, def caffepb.LossParameter_NormalizationMode) caffepb.LossParameter_NormalizationMode {
	switch {
	case lp == nil:
		return def
	case lp.Normalization != nil:
		return lp.GetNormalization()
	case lp.Normalize != nil && lp.GetNormalize():
		return caffepb.LossParameter_VALID
	case lp.Normalize != nil:
		return caffepb.LossParameter_BATCH_SIZE
	}
	return def
}

// normalizer is the count a summed loss is divided by (Caffe's
// get_normalizer): all outer*inner positions (FULL), the non-ignored ones
// (VALID; valid < 0 means all), the batch (BATCH_SIZE) or 1 (NONE); never
// less than 1.
func normalizer(mode caffepb.LossParameter_NormalizationMode, outer, inner, valid int) float64 {
	var n float64
	switch mode {
	case caffepb.LossParameter_FULL:
		n = float64(outer * inner)
	case caffepb.LossParameter_VALID:
		n = float64(valid)
		if valid < 0 {
			n = float64(outer * inner)
		}
	case caffepb.LossParameter_BATCH_SIZE:
		n = float64(outer)
	default:
		n = 1
	}
	return max(n, 1)
}

// checkLabel returns an error unless label v at position i is a class in
// [0, classes) or the ignored label.
func checkLabel[T layer.Float](v T, i, classes int, hasIgnore bool, ignore int) error {
	if hasIgnore && int(v) == ignore {
		return nil
	}
	if int(v) < 0 || int(v) >= classes || T(int(v)) != v {
		return fmt.Errorf("label %v at position %d is not a class in [0, %d)", v, i, classes)
	}
	return nil
}

// checkLabels checks every label of b (used on the host, and after a device
// pass found an invalid one, to say which).
func checkLabels[T layer.Float](b *blob.Blob[T], classes int, hasIgnore bool, ignore int) error {
	for i, v := range b.CPUData() {
		if err := checkLabel(v, i, classes, hasIgnore, ignore); err != nil {
			return err
		}
	}
	return nil
}
