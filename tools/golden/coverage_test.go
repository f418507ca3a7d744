package golden

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// Every registered layer type is held against BVLC Caffe by a golden net
// here, or its spec says why not (layer.Spec.NoGolden: a fork's layer, a
// layer reading files); a reason for a type that has a golden net is
// stale and fails too.
func TestEveryTypeHasAGoldenNet(t *testing.T) {
	nets, err := filepath.Glob("testdata/nets/*.prototxt")
	if err != nil || len(nets) == 0 {
		t.Fatalf("no golden nets: %v", err)
	}
	covered := map[string][]string{}
	for _, path := range nets {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := &caffepb.NetParameter{}
		if err := protoio.ParseText(text, p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, l := range p.Layer {
			if !slices.Contains(covered[l.GetType()], path) {
				covered[l.GetType()] = append(covered[l.GetType()], filepath.Base(path))
			}
		}
	}
	for _, s := range layer.Specs() {
		nets := covered[s.Type]
		switch {
		case len(nets) == 0 && s.NoGolden == "":
			t.Errorf("%s has no golden net in testdata/nets, and its spec gives no reason (NoGolden)", s.Type)
		case len(nets) > 0 && s.NoGolden != "":
			t.Errorf("%s has golden nets (%v), and its spec says it has none: %q", s.Type, nets, s.NoGolden)
		}
	}
}
