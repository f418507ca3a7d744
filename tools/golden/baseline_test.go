package golden

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

var float64Baseline = flag.Bool("golden.float64", false, "run TestFloat64Baseline (CaffeNet in float64 takes 1 GB)")

// TestFloat64Baseline measures what the tolerances rest on: it runs every
// fixture's net in float64 in gocaffe, with the float32 inputs and
// parameters, and measures both Caffe's and gocaffe's float32 results
// against it with the comparison's metric. Both must be within the
// fixture's tolerance of the float64 result. Opt-in:
//
//	go test ./tools/golden -run Float64 -v -args -golden.float64
func TestFloat64Baseline(t *testing.T) {
	if !*float64Baseline {
		t.Skip("measurement against float64: pass -golden.float64 to run it")
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "*.golden.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures (%v)", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".golden.gz")
		t.Run(name, func(t *testing.T) {
			c := &checker{t: t, fixture: name, tolerance: layerTolerance}
			if models[name] {
				c.tolerance = modelTolerance
			}
			c.run(path)
			n64 := c.float64Twin()
			defer n64.Close()
			var caffe, ours worst
			for _, v := range c.float64Views(n64) {
				want := make([]float32, len(v.f64))
				for i, x := range v.f64 {
					want[i] = float32(x)
				}
				caffe.add(relErr(v.caffe, want).err, v.what)
				ours.add(relErr(v.ours, want).err, v.what)
			}
			t.Logf("%-24s against float64: Caffe %.2g (%s), gocaffe %.2g (%s); gocaffe against Caffe %.2g",
				name, caffe.err, caffe.where, ours.err, ours.where, c.worst.err)
			if caffe.err > c.tolerance || ours.err > c.tolerance {
				t.Errorf("float32 results beyond the tolerance %g of float64's", c.tolerance)
			}
		})
	}
}

// float64Twin builds the checker's net in float64 with its float32 net's
// parameters and inputs, and runs it forward and backward.
func (c *checker) float64Twin() *net.Net[float64] {
	model := filepath.Join("testdata", "nets", c.fixture+".prototxt")
	n64, err := net.NewFromFile[float64](model, net.Options{State: &caffepb.NetState{Phase: c.fx.phase.Enum()}})
	if err != nil {
		c.t.Fatal(err)
	}
	widen := func(dst *blob.Blob[float64], src []float32) {
		d := dst.MutableCPUData()
		for i, v := range src {
			d[i] = float64(v)
		}
	}
	for i, l := range c.n.Layers() {
		for j, b := range l.LayerBase().Blobs() {
			// The parameters as they were before Forward.
			src := c.fx.layers[i].GetBlobs()[j].GetData()
			if c.fx.flags.seeded {
				fresh, err := blob.New[float32](b.Shape()...)
				if err != nil {
					c.t.Fatal(err)
				}
				seededFill(c.fx.flags.seed, paramName(c.fx.layers[i].GetName(), j), fresh)
				src = fresh.CPUData()
			}
			widen(n64.Layers()[i].LayerBase().Blobs()[j], src)
		}
		if l.Type() == "Input" {
			for _, top := range c.fx.layers[i].GetTop() {
				widen(n64.BlobByName(top), c.n.BlobByName(top).CPUData())
			}
		}
	}
	if err := n64.ClearParamDiffs(); err != nil {
		c.t.Fatal(err)
	}
	if _, err := n64.Forward(); err != nil {
		c.t.Fatal(err)
	}
	if err := n64.Backward(); err != nil {
		c.t.Fatal(err)
	}
	return n64
}

// view is one compared quantity in the three computations.
type view struct {
	what        string
	f64         []float64
	caffe, ours []float32
}

// float64Views lists the blobs' data and diffs and the parameters' diffs,
// at the fixture's sample indices where it sampled them.
func (c *checker) float64Views(n64 *net.Net[float64]) []view {
	var vs []view
	add := func(what string, b64 []float64, b32 []float32, p *caffepb.BlobProto, idx []int, diff bool) {
		want := p.GetData()
		if diff {
			want = p.GetDiff()
		}
		vs = append(vs, view{what, gather(b64, idx), want, gather(b32, idx)})
	}
	blobs := func(stored named, sampled bool) {
		for name, p := range stored {
			b32, b64 := c.n.BlobByName(name), n64.BlobByName(name)
			var idx []int
			if sampled {
				idx = sampleIndices(c.fx.flags.seed, name, b32.Count(), len(p.GetData()))
			}
			add(name+" data", b64.CPUData(), b32.CPUData(), p, idx, false)
			add(name+" diff", b64.CPUDiff(), b32.CPUDiff(), p, idx, true)
		}
	}
	blobs(c.fx.blobs, false)
	blobs(c.fx.blobSamples, true)
	for i, lp := range c.fx.layers {
		for j, p := range lp.GetBlobs() {
			name := paramName(lp.GetName(), j)
			b32, b64 := c.n.Layers()[i].LayerBase().Blobs()[j], n64.Layers()[i].LayerBase().Blobs()[j]
			var idx []int
			if s, ok := c.fx.paramSamples[name]; ok {
				p, idx = s, sampleIndices(c.fx.flags.seed, name, b32.Count(), len(s.GetData()))
			}
			add(name+" diff", b64.CPUDiff(), b32.CPUDiff(), p, idx, true)
		}
	}
	return vs
}
