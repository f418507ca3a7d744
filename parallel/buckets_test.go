package parallel

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
)

// The flat buffer holds the gradients in the order the backward pass
// completes them, each at an aligned offset; the first bucket closes past
// 1 MiB, the next ones past 25 MiB, and the request bits end the last.
func TestBucketLayout(t *testing.T) {
	counts := []int{
		100,        // layer 0's weights: complete last
		3,          // layer 0's bias
		300_000,    // layer 3 (1.2 MB): complete first
		7_000_000,  // layer 2 (28 MB)
		10,         // layer 2's bias
		2_000_000,  // layer 1 (8 MB)
		5,          // shared by layers 3 and 1: complete after layer 1
		10_000_000, // layer 1's second, 40 MB
	}
	doneAfter := []int{0, 0, 3, 2, 2, 1, 1, 1}
	params := make([]*blob.Blob[float32], len(counts))
	for i, n := range counts {
		b, err := blob.New[float32](n)
		if err != nil {
			t.Fatal(err)
		}
		params[i] = b
	}
	g := &GradientBuckets[float32]{bits: 2}
	order := []int{2, 3, 4, 5, 6, 7, 0, 1} // as NewGradientBuckets sorts them
	offs := g.layout(params, doneAfter, order, 0)

	prev := -1
	for _, i := range order {
		if offs[i]%64 != 0 {
			t.Errorf("gradient %d at element %d, not 256-byte aligned", i, offs[i])
		}
		if offs[i] <= prev {
			t.Errorf("gradient %d at %d, not after the one before (%d)", i, offs[i], prev)
		}
		prev = offs[i]
	}
	want := []bucket{
		{off: 0, n: 300_032, after: 3, params: 1},               // 1.2 MB: past 1 MiB
		{off: 300_032, n: 7_000_000, after: 2, params: 1},       // 28 MB: past 25 MiB
		{off: 7_300_032, n: 12_000_128, after: 1, params: 4},    // layer 2's bias and layer 1's
		{off: 19_300_160, n: 128 + 64 + 2, after: 0, params: 2}, // layer 0's and the requests
	}
	if len(g.buckets) != len(want) {
		t.Fatalf("buckets %+v, want %+v", g.buckets, want)
	}
	for k := range want {
		if g.buckets[k] != want[k] {
			t.Errorf("bucket %d is %+v, want %+v", k, g.buckets[k], want[k])
		}
	}
	last := g.buckets[len(g.buckets)-1]
	if g.reqOff != last.off+last.n-2 || g.elems != g.reqOff+2 {
		t.Errorf("request bits at %d of %d elements; the last bucket ends at %d", g.reqOff, g.elems, last.off+last.n)
	}
	if s := g.String(); !strings.HasPrefix(s, "4 buckets: 1.2 MB (1 gradients, after layer 3)") {
		t.Errorf("String() = %q", s)
	}
}

// A small net's gradients make two buckets: all but the lowest layer's,
// complete after the layer above it, and the lowest layer's alone (with
// the request bits), whose all-reduce is the one the backward pass cannot
// hide.
func TestBucketLayoutSmallNet(t *testing.T) {
	var params []*blob.Blob[float64]
	for _, n := range []int{500, 20, 25_000, 50, 40_000, 10} {
		b, err := blob.New[float64](n)
		if err != nil {
			t.Fatal(err)
		}
		params = append(params, b)
	}
	g := &GradientBuckets[float64]{bits: 2}
	g.layout(params, []int{1, 1, 4, 4, 6, 6}, []int{4, 5, 2, 3, 0, 1}, 0)
	if len(g.buckets) != 2 || g.buckets[0].params != 4 || g.buckets[0].after != 4 || g.buckets[1].params != 2 || g.buckets[1].after != 1 {
		t.Errorf("buckets %+v, want 4 gradients complete after layer 4, then the 2 of layer 1", g.buckets)
	}
	if g.buckets[0].off != 0 || g.buckets[1].off != g.buckets[0].n || g.buckets[1].off+g.buckets[1].n != g.elems {
		t.Errorf("the buckets do not cover the %d elements in order: %+v", g.elems, g.buckets)
	}
	// A net of one learnable layer: one bucket.
	g = &GradientBuckets[float64]{bits: 2}
	g.layout(params[:2], []int{1, 1}, []int{0, 1}, 0)
	if len(g.buckets) != 1 || g.buckets[0].params != 2 {
		t.Errorf("one layer's gradients make buckets %+v, want one", g.buckets)
	}
}

// With a cap of one byte every gradient is a bucket of its own.
func TestBucketLayoutCap(t *testing.T) {
	var params []*blob.Blob[float32]
	for _, n := range []int{8, 3, 5} {
		b, err := blob.New[float32](n)
		if err != nil {
			t.Fatal(err)
		}
		params = append(params, b)
	}
	g := &GradientBuckets[float32]{}
	g.layout(params, []int{3, 2, 1}, []int{0, 1, 2}, 1)
	want := []bucket{{0, 64, 3, 1}, {64, 64, 2, 1}, {128, 64, 1, 1}}
	if !slices.Equal(g.buckets, want) {
		t.Errorf("buckets %+v, want %+v", g.buckets, want)
	}
}
