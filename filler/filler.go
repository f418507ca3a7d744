// Package filler initialises blobs from a Caffe FillerParameter: constant,
// uniform, gaussian (optionally sparse), positive_unitball, xavier, msra and
// bilinear, with Caffe's formulas and defaults.
//
// Fillers draw from the *rand.Rand they are given, so a fixed seed gives the
// same weights on every run.
package filler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Filler fills a blob's data.
type Filler[T blob.Float] interface {
	// Fill overwrites b's data. It fails if b's shape does not suit the
	// filler (an empty blob, a non-square filter for bilinear, ...).
	Fill(b *blob.Blob[T], rng *rand.Rand) error
}

var types = []string{"constant", "uniform", "gaussian", "positive_unitball", "xavier", "msra", "bilinear"}

// Types returns the filler types New accepts (a new slice each call).
func Types() []string { return slices.Clone(types) }

// New returns the filler p describes. A nil p is Caffe's default, a
// constant 0. Parameters that Caffe rejects (an unknown type, sparsity on a
// filler other than gaussian, min > max, a non-positive std) are errors.
func New[T blob.Float](p *caffepb.FillerParameter) (Filler[T], error) {
	typ := p.GetType()
	if p.GetSparse() < -1 {
		return nil, fmt.Errorf("filler %q: sparse = %d, want -1 (off) or >= 0", typ, p.GetSparse())
	}
	if p.GetSparse() != -1 && typ != "gaussian" {
		return nil, fmt.Errorf("filler %q: sparsity (sparse = %d) is only supported by the gaussian filler", typ, p.GetSparse())
	}
	switch typ {
	case "constant":
		return constant[T]{value: T(p.GetValue())}, nil
	case "uniform":
		if p.GetMin() > p.GetMax() {
			return nil, fmt.Errorf("filler \"uniform\": min = %v is greater than max = %v", p.GetMin(), p.GetMax())
		}
		return uniform[T]{min: T(p.GetMin()), max: T(p.GetMax())}, nil
	case "gaussian":
		if !(p.GetStd() > 0) {
			return nil, fmt.Errorf("filler \"gaussian\": std = %v, want > 0", p.GetStd())
		}
		return gaussian[T]{mean: T(p.GetMean()), std: T(p.GetStd()), sparse: int(p.GetSparse())}, nil
	case "positive_unitball":
		return positiveUnitball[T]{}, nil
	case "xavier":
		return xavier[T]{norm: p.GetVarianceNorm()}, nil
	case "msra":
		return msra[T]{norm: p.GetVarianceNorm()}, nil
	case "bilinear":
		return bilinear[T]{}, nil
	}
	return nil, fmt.Errorf("filler: unknown filler type %q (known: %v)", typ, types)
}

// nonEmpty is Caffe's CHECK(blob->count()).
func nonEmpty[T blob.Float](name string, b *blob.Blob[T]) error {
	if b.Count() == 0 {
		return fmt.Errorf("filler %q: cannot fill an empty blob (shape %s)", name, b.ShapeString())
	}
	return nil
}

type constant[T blob.Float] struct{ value T }

func (f constant[T]) Fill(b *blob.Blob[T], _ *rand.Rand) error {
	if err := nonEmpty("constant", b); err != nil {
		return err
	}
	mathfn.Set(b.Count(), f.value, b.MutableCPUData())
	return nil
}

type uniform[T blob.Float] struct{ min, max T }

func (f uniform[T]) Fill(b *blob.Blob[T], rng *rand.Rand) error {
	if err := nonEmpty("uniform", b); err != nil {
		return err
	}
	mathfn.RngUniform(b.Count(), f.min, f.max, b.MutableCPUData(), rng)
	return nil
}

type gaussian[T blob.Float] struct {
	mean, std T
	sparse    int
}

// Fill draws N(mean, std^2). With sparse >= 0 each element survives with
// probability sparse / shape(0), so that each output keeps sparse non-zero
// weights on average, and is zero otherwise.
func (f gaussian[T]) Fill(b *blob.Blob[T], rng *rand.Rand) error {
	if err := nonEmpty("gaussian", b); err != nil {
		return err
	}
	data := b.MutableCPUData()
	mathfn.RngGaussian(b.Count(), f.mean, f.std, data, rng)
	if f.sparse < 0 {
		return nil
	}
	if b.NumAxes() < 1 {
		return fmt.Errorf("filler \"gaussian\": sparse needs a blob with at least one axis, got shape %s", b.ShapeString())
	}
	outputs := b.Shape()[0]
	if f.sparse > outputs {
		return fmt.Errorf("filler \"gaussian\": sparse = %d exceeds the %d outputs (shape(0)) of blob %s", f.sparse, outputs, b.ShapeString())
	}
	p := float64(f.sparse) / float64(outputs)
	for i := range data {
		if rng.Float64() >= p {
			data[i] = 0
		}
	}
	return nil
}

type positiveUnitball[T blob.Float] struct{}

// Fill draws U(0, 1) and divides each of the shape(0) rows by its sum.
func (positiveUnitball[T]) Fill(b *blob.Blob[T], rng *rand.Rand) error {
	if err := nonEmpty("positive_unitball", b); err != nil {
		return err
	}
	data := b.MutableCPUData()
	mathfn.RngUniform(b.Count(), 0, 1, data, rng)
	num := b.Shape()[0]
	dim := b.Count() / num
	for i := range num {
		row := data[i*dim : (i+1)*dim]
		var sum T
		for _, v := range row {
			sum += v
		}
		for j := range row {
			row[j] /= sum
		}
	}
	return nil
}

// fanScale returns the n of xavier and msra: fan_in = count/shape(0),
// fan_out = count/shape(1) (count for 1-D blobs), or their mean.
func fanScale[T blob.Float](name string, b *blob.Blob[T], norm caffepb.FillerParameter_VarianceNorm) (float64, error) {
	if err := nonEmpty(name, b); err != nil {
		return 0, err
	}
	shape := b.Shape()
	fanIn := b.Count() / shape[0]
	fanOut := b.Count()
	if len(shape) > 1 {
		fanOut = b.Count() / shape[1]
	}
	switch norm {
	case caffepb.FillerParameter_FAN_OUT:
		return float64(fanOut), nil
	case caffepb.FillerParameter_AVERAGE:
		return float64(fanIn+fanOut) / 2, nil
	}
	return float64(fanIn), nil
}

type xavier[T blob.Float] struct {
	norm caffepb.FillerParameter_VarianceNorm
}

// Fill draws U(-s, s) with s = sqrt(3 / n), which gives variance 1/n.
func (f xavier[T]) Fill(b *blob.Blob[T], rng *rand.Rand) error {
	n, err := fanScale("xavier", b, f.norm)
	if err != nil {
		return err
	}
	s := T(math.Sqrt(3 / n))
	mathfn.RngUniform(b.Count(), -s, s, b.MutableCPUData(), rng)
	return nil
}

type msra[T blob.Float] struct {
	norm caffepb.FillerParameter_VarianceNorm
}

// Fill draws N(0, 2/n), He et al.'s initialisation for ReLU nets.
func (f msra[T]) Fill(b *blob.Blob[T], rng *rand.Rand) error {
	n, err := fanScale("msra", b, f.norm)
	if err != nil {
		return err
	}
	mathfn.RngGaussian(b.Count(), 0, T(math.Sqrt(2/n)), b.MutableCPUData(), rng)
	return nil
}

type bilinear[T blob.Float] struct{}

// Fill writes the bilinear interpolation kernel that makes a Deconvolution
// layer upsample by its stride; every channel gets the same kernel.
func (bilinear[T]) Fill(b *blob.Blob[T], _ *rand.Rand) error {
	shape := b.Shape()
	if len(shape) != 4 {
		return fmt.Errorf("filler \"bilinear\": blob must be 4-D, got shape %s", b.ShapeString())
	}
	height, width := shape[2], shape[3]
	if width != height {
		return fmt.Errorf("filler \"bilinear\": filter must be square, got %dx%d (shape %s)", height, width, b.ShapeString())
	}
	if err := nonEmpty("bilinear", b); err != nil {
		return err
	}
	f := math.Ceil(float64(width) / 2)
	c := (2*f - 1 - math.Mod(f, 2)) / (2 * f)
	data := b.MutableCPUData()
	for i := range data {
		x := float64(i % width)
		y := float64((i / width) % height)
		data[i] = T((1 - math.Abs(x/f-c)) * (1 - math.Abs(y/f-c)))
	}
	return nil
}
