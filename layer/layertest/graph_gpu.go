package layertest

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// RunGraphReplay holds the types to what their Spec.CUDAGraph promises:
// for each parity case of a type whose spec says its GPU passes replay
// from a CUDA graph, the layer's forward and backward passes are recorded
// once and replayed on new inputs, written into the same device memory,
// and must give what running the passes on those inputs gives. A pass
// that waits for the device or reads back fails the recording; one that
// bakes a value of its inputs into a kernel's arguments fails the
// comparison. Skipped without a GPU.
func (c *Cases) RunGraphReplay(t *testing.T) {
	cudatest.Device(t)
	for _, p := range c.Parity {
		typ := Param(t, p.Layer).GetType()
		if s, ok := layer.SpecOf(typ); !ok || !s.CUDAGraph {
			continue
		}
		t.Run(typ, func(t *testing.T) { checkGraphReplay(t, p) })
	}
}

// replayRig is one layer on the GPU with its blobs, for checkGraphReplay.
type replayRig struct {
	p           Parity
	ctx         *device.Context
	view        *device.GPUView[float32]
	l           layer.Layer[float32]
	bottom, top []*blob.Blob[float32]
	acc         *blob.Blob[float32] // the loss, added up on the device
	propagate   []bool
}

func checkGraphReplay(t *testing.T, p Parity) {
	r := newReplayRig(t, p)
	if err := layer.Recordable(r.l); err != nil {
		t.Fatalf("its spec says CUDAGraph, and: %v", err)
	}
	// A first pass outside the recording: buffers are allocated and
	// kernels compiled, which a recording may not do.
	r.setInputs(t, 1)
	if err := r.pass(); err != nil {
		t.Fatal(err)
	}
	if err := r.ctx.Synchronize(); err != nil {
		t.Fatal(err)
	}
	r.setInputs(t, 2)
	stream := r.ctx.Stream()
	if err := stream.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	passErr := r.pass()
	graph, err := stream.EndCapture()
	if passErr != nil || err != nil {
		t.Fatalf("recording its forward and backward passes: %v, %v", passErr, err)
	}
	defer graph.Close()
	for _, seed := range []uint64{3, 4} {
		r.setInputs(t, seed)
		if err := graph.Launch(stream); err != nil {
			t.Fatal(err)
		}
		r.markReplayed(t)
		replayed := r.results(t)
		r.setInputs(t, seed)
		if err := r.pass(); err != nil {
			t.Fatal(err)
		}
		ran := r.results(t)
		for i := range ran {
			CheckClose(t, fmt.Sprintf("inputs %d, result %d (tops, bottom diffs, parameter diffs, loss)", seed, i), replayed[i], ran[i], 1e-5)
		}
		if t.Failed() {
			return
		}
	}
}

func newReplayRig(t *testing.T, p Parity) *replayRig {
	ctx := p.Context
	if ctx == nil {
		ctx = device.New(cudatest.Device(t))
	}
	view, err := device.NewGPUView[float32](ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &replayRig{p: p, ctx: ctx, view: view, l: New[float32](t, p.Layer)}
	r.l.LayerBase().SetContext(ctx)
	r.l.LayerBase().SetRNG(mathfn.NewRNG(1))
	for _, shape := range p.Bottom {
		b := Blob[float32](t, shape...)
		b.SetDevice(ctx.Device())
		r.bottom = append(r.bottom, b)
	}
	nTop := len(r.l.LayerBase().Param().GetTop())
	if nTop == 0 {
		nTop = r.l.Counts().Top.Min
	}
	r.top = Blobs[float32](t, nTop)
	for _, b := range r.top {
		b.SetDevice(ctx.Device())
	}
	r.setInputs(t, 1)
	SetUp(t, r.l, r.bottom, r.top)
	r.acc = Blob[float32](t, 1)
	r.acc.SetDevice(ctx.Device())
	r.propagate = AllTrue(len(r.bottom))
	for _, i := range p.NoPropagate {
		r.propagate[i] = false
	}
	return r
}

// setInputs writes the bottoms and the tops' gradients for inputs seed on
// the host, and copies them to the device memory the passes read: outside
// a recording, which may not copy synchronously.
func (r *replayRig) setInputs(t *testing.T, seed uint64) {
	for i, b := range r.bottom {
		vals := make([]float64, b.Count())
		if r.p.Fill != nil {
			r.p.Fill(i, vals)
			vals = fillVariant(vals, seed)
		} else {
			lo, hi := r.p.Lo, r.p.Hi
			if lo == 0 && hi == 0 {
				lo, hi = -1, 1
			}
			mathfn.RngUniform(len(vals), lo, hi, vals, mathfn.NewRNG(100*seed+uint64(i)))
		}
		data := b.MutableCPUData()
		for j, v := range vals {
			data[j] = float32(v)
		}
		if _, err := b.GPUData(); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.top) == 0 || r.top[0].Count() == 0 {
		return // not set up yet: the tops have no shape
	}
	for i, b := range r.top {
		if r.l.LayerBase().Loss(i) != 0 || b.Count() == 0 {
			continue // a loss top's diff holds its weight
		}
		mathfn.RngUniform(b.Count(), -1, 1, b.MutableCPUDiff(), mathfn.NewRNG(200*seed+uint64(i)))
		if _, err := b.GPUDiff(); err != nil {
			t.Fatal(err)
		}
	}
}

// fillVariant gives other inputs of the kind a case's Fill makes for
// seeds after the first: its values taken in another order, so that
// indices stay valid indices and positive values positive.
func fillVariant(vals []float64, seed uint64) []float64 {
	if seed <= 1 || len(vals) == 0 {
		return vals
	}
	out := make([]float64, len(vals))
	for j := range out {
		out[j] = vals[(j*int(7*seed+1)+int(seed))%len(vals)]
	}
	return out
}

// pass runs the layer's forward and backward passes on the device, its
// parameter gradients and the loss accumulator zeroed first, without
// waiting for the device.
func (r *replayRig) pass() error {
	v := r.view
	v.ResetErr()
	for _, b := range r.l.LayerBase().Blobs() {
		v.Set(b.Count(), 0, v.MutableDiff(b))
	}
	v.Set(1, 0, v.MutableData(r.acc))
	if err := v.Err(); err != nil {
		return err
	}
	if err := layer.ForwardOnDevice(r.l, r.bottom, r.top, r.acc); err != nil {
		return err
	}
	return layer.Backward(r.l, r.top, r.propagate, r.bottom)
}

// markReplayed tells the blobs a replay wrote that their device copies
// changed outside their accessors (as the solver does after its graph), so
// that reading them copies back.
func (r *replayRig) markReplayed(t *testing.T) {
	mems := []*syncedmem.SyncedMemory{r.acc.Data()}
	for _, b := range r.top {
		mems = append(mems, b.Data())
	}
	for i, b := range r.bottom {
		if r.propagate[i] {
			mems = append(mems, b.Diff())
		}
	}
	for _, b := range r.l.LayerBase().Blobs() {
		mems = append(mems, b.Diff())
	}
	for _, m := range mems {
		if m == nil {
			continue
		}
		if err := m.MarkDeviceWritten(); err != nil {
			t.Fatal(err)
		}
	}
}

// results reads what a pass computed back to the host: the tops, the
// gradients of the bottoms that propagate, the parameters' gradients and
// the loss.
func (r *replayRig) results(t *testing.T) [][]float32 {
	if err := r.ctx.Synchronize(); err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, b := range r.top {
		out = append(out, append([]float32(nil), b.CPUData()...))
	}
	for i, b := range r.bottom {
		if r.propagate[i] {
			out = append(out, append([]float32(nil), b.CPUDiff()...))
		}
	}
	for _, b := range r.l.LayerBase().Blobs() {
		out = append(out, append([]float32(nil), b.CPUDiff()...))
	}
	return append(out, append([]float32(nil), r.acc.CPUData()...))
}
