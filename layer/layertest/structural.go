package layertest

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
)

// Helpers shared by the tests of the structural layers (Concat, Slice,
// Split, Flatten, Reshape, Crop, Eltwise, Silence, Input, DummyData).

// GaussBlob returns a float64 blob of the given shape filled from N(0, 1).
func GaussBlob(t *testing.T, seed uint64, shape ...int) *blob.Blob[float64] {
	t.Helper()
	b := Blob[float64](t, shape...)
	FillGaussian(b, 0, 1, seed)
	return b
}

// GaussBlobs returns one gaussian blob per shape.
func GaussBlobs(t *testing.T, shapes ...[]int) []*blob.Blob[float64] {
	t.Helper()
	out := make([]*blob.Blob[float64], len(shapes))
	for i, s := range shapes {
		out[i] = GaussBlob(t, uint64(31+i), s...)
	}
	return out
}

// SetUpForward sets the layer up and runs one forward pass.
func SetUpForward(t *testing.T, l layer.Layer[float64], bottom, top []*blob.Blob[float64]) {
	t.Helper()
	SetUp(t, l, bottom, top)
	Forward(t, l, bottom, top)
}

// CheckShape fails unless b has the given shape.
func CheckShape(t *testing.T, what string, b *blob.Blob[float64], want ...int) {
	t.Helper()
	if !slices.Equal(b.Shape(), want) {
		t.Errorf("%s: shape %v, want %v", what, b.Shape(), want)
	}
}

// ExpectSetUpError builds the layer `name: "bad" <param>` and sets it up on
// gaussian bottoms of the given shapes and nTop empty tops; construction or
// setup must fail with an error that names the layer and contains every
// wanted string.
func ExpectSetUpError(t *testing.T, param string, bottoms [][]int, nTop int, want ...string) {
	t.Helper()
	l, err := layer.New[float64](Param(t, `name: "bad" `+param))
	if err == nil {
		err = layer.SetUp(l, GaussBlobs(t, bottoms...), Blobs[float64](t, nTop))
	}
	if err == nil {
		t.Errorf("%s on %v: no error, want one containing %q", param, bottoms, want)
		return
	}
	msg := err.Error()
	ok := strings.Contains(msg, `"bad"`)
	for _, w := range want {
		ok = ok && strings.Contains(msg, w)
	}
	if !ok {
		t.Errorf("%s on %v: err = %v, want one naming layer \"bad\" and containing %q", param, bottoms, err, want)
	}
}

// SharesMemory reports whether two blobs see each other's writes to data
// (and to diff when diff is set), by writing through a.
func SharesMemory(a, b *blob.Blob[float64], diff bool) bool {
	if a.Count() == 0 || a.Count() != b.Count() {
		return false
	}
	a.MutableCPUData()[0] = 12345
	same := b.CPUData()[0] == 12345
	if diff {
		a.MutableCPUDiff()[0] = 54321
		same = same && b.CPUDiff()[0] == 54321
	}
	return same
}

// AxisJoin is the reference of Concat and Slice: the whole blob is outer
// blocks in which the parts' blocks (partAxis[i] * inner elements) follow
// each other.
func AxisJoin(parts [][]float64, partAxis []int, outer, inner int) []float64 {
	var out []float64
	for o := range outer {
		for i, p := range parts {
			n := partAxis[i] * inner
			out = append(out, p[o*n:(o+1)*n]...)
		}
	}
	return out
}

// QuantizedFill returns a Parity fill with values on a grid of the given
// number of levels in [0, 1), so that bottoms tie often.
func QuantizedFill(levels int) func(i int, v []float64) {
	return func(i int, v []float64) {
		for j := range v {
			v[j] = float64((j*(i+1)+i)%levels) / float64(levels)
		}
	}
}
