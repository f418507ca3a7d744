package net_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/internal/randnet"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// foldGenerators are internal/randnet's generators whose deploy nets hold
// what inference folding takes (convolutions and inner products, then
// BatchNorm, Scale, ReLU, Dropout in place; siblings reading one bottom)
// and the layers around them.
var foldGenerators = []string{"chain", "convolution", "deconvolution", "innerproduct", "batchnorm", "scale", "bias",
	"neuron", "elementwise", "pooling", "eltwise", "concat", "lrn"}

// TestFoldRandomNets folds random deploy nets (internal/randnet's, chains
// of convolutions, BatchNorm, Scale and in-place activations among them)
// and holds every blob to the unfolded net's within FoldTolerance.
func TestFoldRandomNets(t *testing.T) {
	dir := t.TempDir()
	for seed := 1; seed <= 1500; seed++ {
		g, n, ok := randnet.DrawDeploy(uint64(seed), 0xf01d, foldGenerators)
		if !ok {
			continue
		}
		text := n.DeployText()
		t.Run(fmt.Sprintf("%d_%s", seed, g.Name), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%d.prototxt", seed))
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := net.NewFromFile[float32](path, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}}); err != nil {
				t.Skipf("gocaffe refuses the net, as Caffe does: %v", err)
			}
			folded, plain := deployPair(t, path)
			defer folded.Close()
			defer plain.Close()
			if _, err := folded.Forward(); err != nil {
				t.Fatal(err)
			}
			if _, err := plain.Forward(); err != nil {
				t.Fatal(err)
			}
			compareBlobs(t, folded, plain)
			if t.Failed() {
				t.Logf("the net:\n%s\nthe plan: %v", text, folded.Plan().Passes)
			}
		})
	}
}
