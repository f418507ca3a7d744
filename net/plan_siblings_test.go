package net_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/net"
)

// MobileNet-SSD's heads on one feature map are siblings (plan_siblings.go):
// the class head is computed with the box head's pass, in whole passes,
// in partial ones that write the feature map between the two, and at
// another batch.
func TestFoldSiblings(t *testing.T) {
	path := filepath.Join("..", "models", "forks", "mobilenet_ssd_deploy.prototxt")
	folded, plain := deployPair(t, path)
	p := folded.Plan()
	lead, sib := slices.Index(folded.LayerNames(), "conv11_mbox_loc"), slices.Index(folded.LayerNames(), "conv11_mbox_conf")
	if got := p.Layers[sib].Folded; got != "computed with conv11_mbox_loc" {
		t.Errorf("conv11_mbox_conf folded %q", got)
	}
	if got := p.Layers[lead].Folded; got != "" {
		t.Errorf("conv11_mbox_loc folded %q", got)
	}
	both := func(f func(n *net.Net[float32]) error) {
		t.Helper()
		for _, n := range []*net.Net[float32]{folded, plain} {
			if err := f(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	both(func(n *net.Net[float32]) error { _, err := n.Forward(); return err })
	compareBlobs(t, folded, plain)

	// The box head's pass, then another input's feature map before the
	// class head's: that one computes its own from the new map.
	both(func(n *net.Net[float32]) error { _, err := n.ForwardFromTo(0, lead); return err })
	both(func(n *net.Net[float32]) error {
		x := n.BlobByName("data").MutableCPUData()
		for i := range x {
			x[i] = 0.5 - x[i]
		}
		_, err := n.ForwardFromTo(0, lead-1)
		return err
	})
	both(func(n *net.Net[float32]) error { _, err := n.ForwardFromTo(lead+1, len(n.Layers())-1); return err })
	compareBlobs(t, folded, plain)

	// A batch of two.
	both(func(n *net.Net[float32]) error {
		in := n.BlobByName("data")
		shape := slices.Clone(in.Shape())
		shape[0] = 2
		if err := in.Reshape(shape); err != nil {
			return err
		}
		x := in.MutableCPUData()
		for i := range x {
			x[i] = float32(i%17)/8 - 1
		}
		_, err := n.Forward()
		return err
	})
	compareBlobs(t, folded, plain)
}
