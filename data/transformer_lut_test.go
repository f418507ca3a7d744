package data

import (
	"math/rand/v2"
	"testing"
)

// The lookup path gives exactly transformPlanes' values.
func TestTransformPixelsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 4*9*11)
	for i := range src {
		src[i] = byte(rng.IntN(256))
	}
	for _, g := range []planeGeometry{
		{c: 4, h: 9, w: 11, oh: 5, ow: 6, hOff: 2, wOff: 3, mirror: true, flow: true},
		{c: 4, h: 9, w: 11, oh: 9, ow: 11},
		{c: 4, h: 9, w: 11, oh: 4, ow: 7, hOff: 1, wOff: 4, mirror: true},
	} {
		for _, mv := range [][]float32{nil, {104}, {104.5, 117, 123.25, 7}} {
			a, b := make([]float32, g.c*g.oh*g.ow), make([]float32, g.c*g.oh*g.ow)
			transformPlanes(src, a, g, nil, mv, 0.017)
			transformPixels(src, b, g, nil, mv, 0.017)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("geometry %+v means %v: value %d is %v, transformPlanes %v", g, mv, i, b[i], a[i])
				}
			}
		}
	}
}
