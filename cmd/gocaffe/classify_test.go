package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/classify"
	"github.com/gocaffe/gocaffe/data"
)

// TestClassifyLeNetFashionMNIST: LeNet trained briefly on Fashion-MNIST;
// `gocaffe classify` (and the library's Classifier) on the first 500 test
// images, written as PNG files, reach exactly the accuracy `gocaffe test`
// reports on the same 500 images from the LMDB (the same pixels, scaled
// as the Data layer's transform_param does).
func TestClassifyLeNetFashionMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LeNet for 300 iterations")
	}
	images, labels := filepath.Join(fashionDir, "t10k-images-idx3-ubyte.gz"), filepath.Join(fashionDir, "t10k-labels-idx1-ubyte.gz")
	if _, err := os.Stat(images); err != nil {
		t.Skipf("dataset-fashion-mnist is not installed: %v", err)
	}
	dir := t.TempDir()
	trainDB, testDB := filepath.Join(dir, "train_lmdb"), filepath.Join(dir, "test_lmdb")
	for _, c := range [][]string{
		{filepath.Join(fashionDir, "train-images-idx3-ubyte.gz"), filepath.Join(fashionDir, "train-labels-idx1-ubyte.gz"), trainDB},
		{images, labels, testDB},
	} {
		if code, _, stderr := runCmd(append([]string{"convert_mnist_data"}, c...)...); code != 0 {
			t.Fatalf("convert_mnist_data: %s", stderr)
		}
	}
	text, err := os.ReadFile("../../models/lenet/lenet_train_test.prototxt")
	if err != nil {
		t.Fatal(err)
	}
	netText := strings.NewReplacer("examples/lenet/fashion_mnist_train_lmdb", trainDB, "examples/lenet/fashion_mnist_test_lmdb", testDB).Replace(string(text))
	netPath := filepath.Join(dir, "lenet_train_test.prototxt")
	os.WriteFile(netPath, []byte(netText), 0o644)
	solver := filepath.Join(dir, "solver.prototxt")
	os.WriteFile(solver, fmt.Appendf(nil, `net: %q base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "inv" gamma: 0.0001 power: 0.75
max_iter: 300 display: 100 snapshot_prefix: %q random_seed: 1`, netPath, filepath.Join(dir, "lenet")), 0o644)
	if code, _, stderr := runCmd("train", "-solver", solver); code != 0 {
		t.Fatalf("train: %s", lastLines(stderr, 5))
	}
	weights := filepath.Join(dir, "lenet_iter_300.caffemodel")

	code, stdout, stderr := runCmd("test", "-model", netPath, "-weights", weights, "-iterations", "5")
	m := regexp.MustCompile(`accuracy = ([0-9.]+)`).FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("test: exit %d: %s %s", code, stdout, lastLines(stderr, 3))
	}
	want, _ := strconv.ParseFloat(m[1], 64)

	idx, err := data.OpenIDX(images)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := data.OpenIDX(labels)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var truth []int
	pix, l := make([]byte, idx.ItemSize()), make([]byte, 1)
	for i := range 500 {
		if err := idx.ReadItem(pix); err != nil {
			t.Fatal(err)
		}
		if err := lab.ReadItem(l); err != nil {
			t.Fatal(err)
		}
		img := image.NewGray(image.Rect(0, 0, 28, 28))
		copy(img.Pix, pix)
		p := filepath.Join(dir, fmt.Sprintf("img%03d.png", i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, img)
		f.Close()
		paths, truth = append(paths, p), append(truth, int(l[0]))
	}
	idx.Close()
	lab.Close()

	deploy := "../../models/lenet/lenet_deploy.prototxt"
	code, out, stderr := runCmd(append([]string{"classify", "-model", deploy, "-weights", weights, "-scale", "0.00390625", "-top", "1"}, paths...)...)
	if code != 0 {
		t.Fatalf("classify: exit %d: %s", code, lastLines(stderr, 3))
	}
	tops := regexp.MustCompile(`(?m)^[0-9.]+ - "(\d+)"$`).FindAllStringSubmatch(out, -1)
	if len(tops) != len(paths) {
		t.Fatalf("classify printed %d predictions for %d images:\n%s", len(tops), len(paths), out[:min(len(out), 500)])
	}
	right := 0
	for i, m := range tops {
		if c, _ := strconv.Atoi(m[1]); c == truth[i] {
			right++
		}
	}
	got := float64(right) / float64(len(paths))
	t.Logf("gocaffe test accuracy %.4f, classify %.4f on the same %d images", want, got, len(paths))
	if fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", want) {
		t.Errorf("classify's accuracy %.4f differs from the net's %.4f on the same images", got, want)
	}

	// The library with ten crops of a 32x32 resize runs and agrees mostly.
	c, err := classify.New(deploy, weights, classify.Options{Scale: 0.00390625, ResizeHeight: 32, ResizeWidth: 32, Oversample: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, _ := os.Open(paths[0])
	img, _ := png.Decode(f)
	f.Close()
	p, err := c.Probabilities(img)
	if err != nil || len(p) != 10 {
		t.Fatalf("oversampled probabilities: %v %v", p, err)
	}
	var sum float32
	for _, v := range p {
		sum += v
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("averaged probabilities sum to %v", sum)
	}
}
