package mathfn

import (
	"fmt"
	"math/rand/v2"
)

// NewRNG returns a random number generator seeded with seed. The same seed
// gives the same sequence on every platform, which is what makes a CPU run
// reproducible.
func NewRNG(seed uint64) *rand.Rand {
	src := &rand.PCG{}
	SeedPCG(src, seed)
	return rand.New(src)
}

// SeedPCG seeds src as NewRNG seeds its generator.
func SeedPCG(src *rand.PCG, seed uint64) { src.Seed(seed, seed^0x9e3779b97f4a7c15) }

// RngUniform fills the first n elements of r with samples from U(a, b).
// It panics unless a <= b.
func RngUniform[T Float](n int, a, b T, r []T, rng *rand.Rand) {
	if a > b {
		panic(fmt.Sprintf("mathfn: RngUniform: a = %v > b = %v", a, b))
	}
	r = r[:n]
	lo, span := float64(a), float64(b)-float64(a)
	for i := range r {
		r[i] = T(lo + span*rng.Float64())
	}
}

// RngGaussian fills the first n elements of r with samples from
// N(mu, sigma^2). It panics unless sigma > 0.
func RngGaussian[T Float](n int, mu, sigma T, r []T, rng *rand.Rand) {
	if !(sigma > 0) {
		panic(fmt.Sprintf("mathfn: RngGaussian: sigma = %v must be positive", sigma))
	}
	r = r[:n]
	m, s := float64(mu), float64(sigma)
	for i := range r {
		r[i] = T(m + s*rng.NormFloat64())
	}
}

// Integer is the element type of Bernoulli masks.
type Integer interface {
	~int | ~int32 | ~uint32
}

// RngBernoulli fills the first n elements of r with 1 with probability p and
// 0 otherwise. It panics unless 0 <= p <= 1.
func RngBernoulli[I Integer](n int, p float64, r []I, rng *rand.Rand) {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("mathfn: RngBernoulli: p = %v is not in [0, 1]", p))
	}
	r = r[:n]
	for i := range r {
		if rng.Float64() < p {
			r[i] = 1
		} else {
			r[i] = 0
		}
	}
}
