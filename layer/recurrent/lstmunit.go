package recurrent

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "LSTMUnit",
		New32: newLSTMUnit[float32], New64: newLSTMUnit[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newLSTMUnitGPU[float32], newLSTMUnitGPU[float64])},
		ONNXWhy: "gocaffe writes no ONNX form of the recurrent layers",
	})
}

// LSTMUnit is one step of an LSTM (Caffe's LSTMUnitLayer). Bottoms: the
// previous cell state c_prev (1 x N x H), the gate inputs x (1 x N x 4H, in
// the order input, forget, output, candidate) and the continuation markers
// cont (1 x N; 0 starts a new sequence). With i, f, o the sigmoids and g
// the tanh of the gate inputs: c = cont*f*c_prev + i*g, h = o*tanh(c).
// Tops: c and h. cont gets no gradient.
type lstmUnitLayer[T layer.Float] struct {
	layer.Base[T]
	hidden int
}

func newLSTMUnit[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &lstmUnitLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "LSTMUnit".
func (*lstmUnitLayer[T]) Type() string { return "LSTMUnit" }

// Counts returns c_prev, x and cont in; c and h out.
func (*lstmUnitLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(3), Top: layer.Exactly(2)}
}

// AllowForceBackward refuses cont.
func (*lstmUnitLayer[T]) AllowForceBackward(i int) bool { return i != 2 }

// LayerSetUp has nothing to do.
func (*lstmUnitLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the shapes and gives both tops c_prev's shape.
func (l *lstmUnitLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	c, x, cont := bottom[0], bottom[1], bottom[2]
	if c.NumAxes() != 3 || c.Shape()[0] != 1 {
		return fmt.Errorf("c_prev must be 1 x N x H, got %s", c.ShapeString())
	}
	l.hidden = c.Shape()[2]
	if x.NumAxes() != 3 || x.Shape()[0] != 1 || x.Shape()[1] != c.Shape()[1] || x.Shape()[2] != 4*l.hidden {
		return fmt.Errorf("x must be 1 x N x 4H = 1 x %d x %d, got %s", c.Shape()[1], 4*l.hidden, x.ShapeString())
	}
	if cont.NumAxes() != 2 || cont.Shape()[0] != 1 || cont.Shape()[1] != c.Shape()[1] {
		return fmt.Errorf("cont must be 1 x N = 1 x %d, got %s", c.Shape()[1], cont.ShapeString())
	}
	for _, t := range top {
		if err := t.ReshapeLike(c); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU computes c and h.
func (l *lstmUnitLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	lstmUnitForward(bottom[0].CPUData(), bottom[1].CPUData(), bottom[2].CPUData(), l.hidden, top[0].MutableCPUData(), top[1].MutableCPUData())
	return nil
}

// BackwardCPU computes the gradients of c_prev and x.
func (l *lstmUnitLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[2] {
		return errors.New("cannot backpropagate to sequence indicators")
	}
	if !propagateDown[0] && !propagateDown[1] {
		return nil
	}
	lstmUnitBackward(bottom[0].CPUData(), bottom[1].CPUData(), bottom[2].CPUData(), l.hidden,
		top[0].CPUData(), top[0].CPUDiff(), top[1].CPUDiff(), bottom[0].MutableCPUDiff(), bottom[1].MutableCPUDiff())
	return nil
}

func sigmoid[T layer.Float](x T) T { return T(1 / (1 + math.Exp(-float64(x)))) }

func tanhT[T layer.Float](x T) T { return T(math.Tanh(float64(x))) }

// lstmUnitForward is one LSTM step for N streams of H units: cPrev and the
// outputs c, h are N x H, gates N x 4H, cont N.
func lstmUnitForward[T layer.Float](cPrev, gates, cont []T, hidden int, c, h []T) {
	for n, cn := range cont {
		x := gates[n*4*hidden : (n+1)*4*hidden]
		for d := range hidden {
			i, o, g := sigmoid(x[d]), sigmoid(x[2*hidden+d]), tanhT(x[3*hidden+d])
			f := T(0)
			if cn != 0 {
				f = cn * sigmoid(x[hidden+d])
			}
			cv := f*cPrev[n*hidden+d] + i*g
			c[n*hidden+d] = cv
			h[n*hidden+d] = o * tanhT(cv)
		}
	}
}

// lstmUnitBackward computes the gradients of c_prev and the gates of one
// step from those of c and h (Caffe's LSTMUnitLayer::Backward_cpu).
func lstmUnitBackward[T layer.Float](cPrev, gates, cont []T, hidden int, c, dc, dh, dcPrev, dgates []T) {
	for n, cn := range cont {
		x := gates[n*4*hidden : (n+1)*4*hidden]
		dx := dgates[n*4*hidden : (n+1)*4*hidden]
		for d := range hidden {
			at := n*hidden + d
			i, o, g := sigmoid(x[d]), sigmoid(x[2*hidden+d]), tanhT(x[3*hidden+d])
			f := T(0)
			if cn != 0 {
				f = cn * sigmoid(x[hidden+d])
			}
			tc := tanhT(c[at])
			term := dc[at] + dh[at]*o*(1-tc*tc)
			dcPrev[at] = term * f
			dx[d] = term * g * i * (1 - i)
			dx[hidden+d] = term * cPrev[at] * f * (1 - f)
			dx[2*hidden+d] = dh[at] * tc * o * (1 - o)
			dx[3*hidden+d] = term * i * (1 - g*g)
		}
	}
}
