package mathfn

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/cuda"
)

// SGDParam is one learnable parameter of a fused SGD step: its data,
// gradient and momentum history on the device, its element count, its
// lr_mult, and its weight decay (weight_decay times decay_mult).
type SGDParam struct {
	Data, Diff, History cuda.DevicePtr
	N                   int
	LRMult, Decay       float64
}

// sgdChunk is the elements one block of sgd_step updates (SGD_CHUNK).
const sgdChunk = 4096

// SGDPlan is a set of parameters laid out on the device for SGDStep: a
// table of the parameters and one of the chunks the blocks take. Make one
// with NewSGDPlan when the parameters' arrays change (Matches says
// whether they did), and Close it.
type SGDPlan struct {
	dev           *cuda.Device
	params        []SGDParam
	table, chunks cuda.DevicePtr
	nChunks       int
}

// NewSGDPlan uploads the tables of params to d (synchronously).
func NewSGDPlan(d *cuda.Device, params []SGDParam) (*SGDPlan, error) {
	p := &SGDPlan{dev: d, params: slices.Clone(params)}
	// struct SGDParam: three pointers, n, lr_mult, decay: 48 bytes.
	table := make([]byte, 0, 48*len(params))
	var chunks []byte // struct SGDChunk: param, pad, start: 16 bytes
	for i, q := range params {
		for _, v := range [...]uint64{uint64(q.Data), uint64(q.Diff), uint64(q.History), uint64(q.N), math.Float64bits(q.LRMult), math.Float64bits(q.Decay)} {
			table = binary.LittleEndian.AppendUint64(table, v)
		}
		for start := 0; start < q.N; start += sgdChunk {
			chunks = binary.LittleEndian.AppendUint64(chunks, uint64(i))
			chunks = binary.LittleEndian.AppendUint64(chunks, uint64(start))
			p.nChunks++
		}
	}
	var err error
	if p.table, err = uploadBytes(d, table); err != nil {
		return nil, err
	}
	if p.chunks, err = uploadBytes(d, chunks); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// uploadBytes copies b to new device memory (none for no bytes).
func uploadBytes(d *cuda.Device, b []byte) (cuda.DevicePtr, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p, err := d.Alloc(len(b))
	if err != nil {
		return 0, err
	}
	if err := d.CopyHtoD(p, b); err != nil {
		d.Free(p)
		return 0, err
	}
	return p, nil
}

// Matches reports whether the plan was made for exactly these parameters.
func (p *SGDPlan) Matches(params []SGDParam) bool { return slices.Equal(p.params, params) }

// Close frees the plan's tables, after the device has finished the steps
// queued with them.
func (p *SGDPlan) Close() error {
	if p.table == 0 && p.chunks == 0 {
		return nil
	}
	err := p.dev.Synchronize()
	for _, t := range [...]cuda.DevicePtr{p.table, p.chunks} {
		if t != 0 {
			if e := p.dev.Free(t); err == nil {
				err = e
			}
		}
	}
	p.table, p.chunks = 0, 0
	return err
}

// SGDStep is Caffe's SGD update and Net::Update for every parameter of the
// plan in one launch: for each, diff *= scale (iter_size's 1/iter_size,
// or 1), diff += decay*w (L2) or decay*sign(w) (l1) unless its decay is 0,
// h = rate*lr_mult*diff + momentum*h, diff = h, w -= diff. The results are
// those of the separate operations on the GPU, Axpy and Axpby fused as
// cuBLAS fuses them.
func (g *GPU[T]) SGDStep(p *SGDPlan, rate float64, momentum, scale T, l1 bool) {
	g.sgdStep(p, rate, 0, momentum, scale, l1, nil)
}

// SGDStepRateAt is SGDStep with the rate read on the device, when the
// kernel runs, from the float64 at rate: a recorded graph replays the step
// with each iteration's rate (stored there with StoreWords).
func (g *GPU[T]) SGDStepRateAt(p *SGDPlan, rate cuda.DevicePtr, momentum, scale T, l1 bool) {
	g.SGDStepRateAtOn(p, rate, momentum, scale, l1, nil)
}

// SGDStepRateAtOn is SGDStepRateAt queued on stream s (nil: the compute
// stream): a data-parallel rank updates a bucket's parameters on the
// stream that all-reduced their gradients, beside the backward pass.
func (g *GPU[T]) SGDStepRateAtOn(p *SGDPlan, rate cuda.DevicePtr, momentum, scale T, l1 bool, s *cuda.Stream) {
	if rate == 0 {
		panic("mathfn: SGDStepRateAt with a null rate pointer")
	}
	g.sgdStep(p, 0, rate, momentum, scale, l1, s)
}

func (g *GPU[T]) sgdStep(p *SGDPlan, rate float64, rateAt cuda.DevicePtr, momentum, scale T, l1 bool, s *cuda.Stream) {
	if g.err != nil || p.nChunks == 0 {
		return
	}
	if g.k == nil {
		g.err = errNoKernels
		return
	}
	f := g.k.sgdStep[typeIndex[T]()]
	flag := 0
	if l1 {
		flag = 1
	}
	var args cuda.Args
	scalar(scalar(args.Ptr(p.table).Ptr(p.chunks).Float64(rate).Ptr(rateAt), momentum), scale).Int(flag)
	g.err = f.Launch(cuda.Dim3{X: p.nChunks}, cuda.Dim3{X: 256}, 0, s, &args)
}

// ZeroDiffs sets the gradient of every parameter of the plan to zero in
// one launch.
func (g *GPU[T]) ZeroDiffs(p *SGDPlan) {
	if g.err != nil || p.nChunks == 0 {
		return
	}
	if g.k == nil {
		g.err = errNoKernels
		return
	}
	var args cuda.Args
	args.Ptr(p.table).Ptr(p.chunks)
	g.err = g.k.sgdZero[typeIndex[T]()].Launch(cuda.Dim3{X: p.nChunks}, cuda.Dim3{X: 256}, 0, nil, &args)
}
