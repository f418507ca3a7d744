package layer_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// Helpers shared by the tests of the structural layers (Concat, Slice,
// Split, Flatten, Reshape, Crop, Eltwise, Silence, Input, DummyData).

// stGaussBlob returns a float64 blob of the given shape filled from N(0, 1).
func stGaussBlob(t *testing.T, seed uint64, shape ...int) *blobF64 {
	t.Helper()
	b := layertest.Blob[float64](t, shape...)
	layertest.FillGaussian(b, 0, 1, seed)
	return b
}

// stGaussBlobs returns one gaussian blob per shape.
func stGaussBlobs(t *testing.T, shapes ...[]int) []*blobF64 {
	t.Helper()
	out := make([]*blobF64, len(shapes))
	for i, s := range shapes {
		out[i] = stGaussBlob(t, uint64(31+i), s...)
	}
	return out
}

// stRun sets the layer up and runs one forward pass.
func stRun(t *testing.T, l layer.Layer[float64], bottom, top []*blobF64) {
	t.Helper()
	layertest.SetUp(t, l, bottom, top)
	layertest.Forward(t, l, bottom, top)
}

// stCheckShape fails unless b has the given shape.
func stCheckShape(t *testing.T, what string, b *blobF64, want ...int) {
	t.Helper()
	if !slices.Equal(b.Shape(), want) {
		t.Errorf("%s: shape %v, want %v", what, b.Shape(), want)
	}
}

// stExpectError builds the layer `name: "bad" <param>` and sets it up on
// gaussian bottoms of the given shapes and nTop empty tops; construction or
// setup must fail with an error that names the layer and contains every
// wanted string.
func stExpectError(t *testing.T, param string, bottoms [][]int, nTop int, want ...string) {
	t.Helper()
	l, err := layer.New[float64](layertest.Param(t, `name: "bad" `+param))
	if err == nil {
		err = layer.SetUp(l, stGaussBlobs(t, bottoms...), layertest.Blobs[float64](t, nTop))
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

// stSharesMemory reports whether two blobs see each other's writes to data
// (and to diff when diff is set), by writing through a.
func stSharesMemory(a, b *blobF64, diff bool) bool {
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

// stAxisJoin is the reference of Concat and Slice: the whole blob is outer
// blocks in which the parts' blocks (partAxis[i] * inner elements) follow
// each other.
func stAxisJoin(parts [][]float64, partAxis []int, outer, inner int) []float64 {
	var out []float64
	for o := range outer {
		for i, p := range parts {
			n := partAxis[i] * inner
			out = append(out, p[o*n:(o+1)*n]...)
		}
	}
	return out
}

// stQuantizedFill returns a Parity fill with values on a grid of the given
// number of levels in [0, 1), so that bottoms tie often.
func stQuantizedFill(levels int) func(i int, v []float64) {
	return func(i int, v []float64) {
		for j := range v {
			v[j] = float64((j*(i+1)+i)%levels) / float64(levels)
		}
	}
}
