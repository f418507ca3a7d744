package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lenetJob writes LeNet's train net reading the Fashion-MNIST training
// LMDB at batch, and a solver for it, into dir; it returns the solver.
func lenetJob(t *testing.T, dir, db string, batch, maxIter, snapshot int) string {
	t.Helper()
	text, err := os.ReadFile("../../models/lenet/lenet_train_test.prototxt")
	if err != nil {
		t.Fatal(err)
	}
	net := strings.Replace(string(text), `source: "examples/lenet/fashion_mnist_train_lmdb"`, fmt.Sprintf("source: %q", db), 1)
	net = strings.Replace(net, "batch_size: 64", fmt.Sprintf("batch_size: %d", batch), 1)
	netPath := filepath.Join(dir, "lenet.prototxt")
	if err := os.WriteFile(netPath, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	solver := fmt.Sprintf(`net: %q
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "inv" gamma: 0.0001 power: 0.75
display: 5 max_iter: %d snapshot: %d snapshot_prefix: %q random_seed: 7 solver_mode: CPU
`, netPath, maxIter, snapshot, filepath.Join(dir, "lenet"))
	path := filepath.Join(dir, "solver.prototxt")
	if err := os.WriteFile(path, []byte(solver), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fashionLMDB converts the Fashion-MNIST training set into an LMDB in dir.
func fashionLMDB(t *testing.T, dir string) string {
	t.Helper()
	// The training set where Debian installs it; elsewhere (the GPU
	// machine) $GOCAFFE_FASHION_MNIST may name a folder with the test set.
	from, set := fashionDir, "train"
	if d := os.Getenv("GOCAFFE_FASHION_MNIST"); d != "" {
		from, set = d, "t10k"
	}
	images := filepath.Join(from, set+"-images-idx3-ubyte.gz")
	if _, err := os.Stat(images); err != nil {
		t.Skipf("dataset-fashion-mnist is not installed: %v", err)
	}
	db := filepath.Join(dir, "train_lmdb")
	if code, log := gocaffe(t, "convert_mnist_data", images, filepath.Join(from, set+"-labels-idx1-ubyte.gz"), db); code != 0 {
		t.Fatalf("convert_mnist_data: exit %d\n%s", code, log)
	}
	return db
}

// sameWeights compares two caffemodels blob by blob: the largest difference
// relative to the blob's largest weight must stay under 1e-5. Data-parallel
// ranks sum their images' gradients in another order than one process
// (evens and odds, then the two sums), so float32 results differ by about
// 1e-7 per iteration (3e-7 after 10 iterations of LeNet here). Left to run
// longer, the difference stays there until some near tie (a max-pooling
// argmax, a ReLU at 0) falls the other way and one image's gradient takes
// another path (seen at iteration 20, after which it is 3e-5 and grows
// with the momentum). A single process at batch 32 with iter_size 2, which
// sums in the same order as at 64, gives identical weights.
func sameWeights(t *testing.T, pathA, pathB string, iters int) {
	t.Helper()
	a, b := readModel(t, pathA), readModel(t, pathB)
	worst := 0.0
	for i, la := range a.Layer {
		lb := b.Layer[i]
		for j, ba := range la.Blobs {
			diff, scale := 0.0, 0.0
			for k, v := range ba.Data {
				diff = max(diff, math.Abs(float64(v-lb.Blobs[j].Data[k])))
				scale = max(scale, math.Abs(float64(v)))
			}
			if scale == 0 {
				t.Errorf("layer %s blob %d is all zero", la.GetName(), j)
				continue
			}
			worst = max(worst, diff/scale)
		}
	}
	t.Logf("after %d iterations the weights differ by at most %.3g of each blob's largest weight", iters, worst)
	if worst > 1e-5 {
		t.Errorf("weights differ by up to %.3g of a blob's largest weight, want <= 1e-5", worst)
	}
}
