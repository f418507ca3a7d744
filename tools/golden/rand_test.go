package golden

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
)

// splitMix is SplitMix64, the generator golden_dump.cpp implements too.
// Each stream is keyed by a name (fnv1a), so values do not depend on the
// order in which blobs are filled.
type splitMix struct{ s uint64 }

func stream(seed uint64, name string) *splitMix { return &splitMix{seed ^ fnv1a(name)} }

func (r *splitMix) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// unit returns a float64 in [0,1) with 53 random bits.
func (r *splitMix) unit() float64 { return float64(r.next()>>11) / (1 << 53) }

func fnv1a(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// fillSpec is the tool's --fill SPEC: uniform:A:B, int:A:B or constant:V.
type fillSpec struct {
	kind string
	a, b float64
}

// fill writes the values golden_dump's Fill writes for name. The explicit
// float64 conversions keep the compiler from fusing a multiply and an add,
// which would round differently from C++ built with -ffp-contract=off.
func (f fillSpec) fill(seed uint64, name string, v []float32) error {
	r := stream(seed, "fill:"+name)
	for i := range v {
		switch f.kind {
		case "constant":
			v[i] = float32(f.a)
		case "int":
			span := uint64(f.b - f.a + 1)
			v[i] = float32(f.a + float64(r.next()%span))
		case "uniform":
			v[i] = float32(f.a + float64((f.b-f.a)*r.unit()))
		default:
			return fmt.Errorf("fill %s: unknown kind %q", name, f.kind)
		}
	}
	return nil
}

// seededFill writes golden_dump's SeededFill into b: uniform in [-s, s)
// with s = sqrt(3/fan_in) for blobs of two or more axes, 0.1 for vectors.
func seededFill(seed uint64, name string, b *blob.Blob[float32]) {
	s := 0.1
	if b.NumAxes() >= 2 {
		s = math.Sqrt(3.0 / float64(b.Count()/b.Shape()[0]))
	}
	r := stream(seed, "param:"+name)
	v := b.MutableCPUData()
	for i := range v {
		u := r.unit()*2 - 1
		v[i] = float32(u * s)
	}
}

// sampleIndices are golden_dump's SampleIndices: where a blob of count
// values stored only k of them.
func sampleIndices(seed uint64, name string, count, k int) []int {
	r := stream(seed, "sample:"+name)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = int(r.next() % uint64(count))
	}
	return idx
}
