package main

import (
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/protoio"
)

// classifyFiles writes a deploy net of two classes, its weights and a gray
// image for it, and returns their paths.
func classifyFiles(t *testing.T, dir string) (model, weights, img string) {
	t.Helper()
	model, weights, img = filepath.Join(dir, "two.prototxt"), filepath.Join(dir, "two.caffemodel"), filepath.Join(dir, "gray.png")
	deploy := `name: "two"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 1 dim: 4 dim: 4 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }`
	if err := os.WriteFile(model, []byte(deploy), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := net.NewFromFile[float32](model, net.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), weights); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return model, weights, img
}

// TestFlagRangesThroughTheCommand: numbers a flag cannot hold are refused
// naming the flag, with exit 1 and nothing trained, never wrapped around
// (-iterations 4294967306 trained 10 iterations) or a panic (classify
// -top -1).
func TestFlagRangesThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	good := writeSolver(t, dir, "ranges", "max_iter: 2")
	model, weights, img := classifyFiles(t, dir)
	if code, log := gocaffe(t, "train", "-solver", writeSolver(t, dir, "teacher", "max_iter: 1")); code != 0 {
		t.Fatalf("training the teacher's weights: exit %d:\n%s", code, lastLines(log, 4))
	}
	teacher := filepath.Join(dir, "teacher_iter_1.caffemodel")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"iterations past int32", []string{"train", "-solver", good, "-iterations", "4294967306"}, []string{"-iterations", "4294967306", "outside"}},
		{"negative iterations", []string{"train", "-solver", good, "-iterations", "-5"}, []string{"-iterations -5"}},
		{"level past int32", []string{"train", "-solver", good, "-level", "4294967306"}, []string{"-level", "4294967306", "outside"}},
		{"level past int32 in test", []string{"test", "-model", filepath.Join(dir, "teacher.prototxt"), "-weights", teacher, "-iterations", "1", "-level", "-4294967297"}, []string{"-level", "-4294967297", "outside"}},
		{"negative top", []string{"classify", "-model", model, "-weights", weights, "-top", "-1", img}, []string{"-top -1", "at least 1"}},
		{"no top", []string{"classify", "-model", model, "-weights", weights, "-top", "0", img}, []string{"-top 0", "at least 1"}},
	}
	for _, c := range cases {
		code, log := gocaffeLimited(t, c.args...)
		if code != 1 || strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") || strings.Contains(log, "fatal error") {
			t.Errorf("%s: exit %d (want 1), log:\n%s", c.name, code, lastLines(log, 8))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: log lacks %q:\n%s", c.name, w, lastLines(log, 4))
			}
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "ranges_iter_*")); len(files) != 0 {
		t.Errorf("a refused flag still trained: %v", files)
	}
	if code, log := gocaffeLimited(t, "classify", "-model", model, "-weights", weights, "-top", "5", img); code != 0 || strings.Count(log, " - \"") != 2 {
		t.Errorf("classify -top 5 of 2 classes: exit %d:\n%s", code, lastLines(log, 4))
	}
}

// TestTooManyParamsThroughTheCommand: a layer given more param specs than
// it has learnable blobs (three for an InnerProduct's two) is refused as
// Caffe refuses it, naming the layer, before anything is trained.
func TestTooManyParamsThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	net := strings.Replace(teacherNet, `param { lr_mult: 0 } param { lr_mult: 0 }`, `param { lr_mult: 0 } param { lr_mult: 0 } param { lr_mult: 0 }`, 1)
	netPath := filepath.Join(dir, "three.prototxt")
	if err := os.WriteFile(netPath, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	solverPath := filepath.Join(dir, "three_solver.prototxt")
	if err := os.WriteFile(solverPath, fmt.Appendf(nil, "net: %q base_lr: 0.1 lr_policy: \"fixed\" max_iter: 2 snapshot_prefix: %q", netPath, filepath.Join(dir, "three")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"train", "-solver", solverPath}, {"time", "-model", netPath, "-iterations", "1"}} {
		code, log := gocaffeLimited(t, args...)
		if code != 1 || strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") || !strings.Contains(log, `layer "teacher" (InnerProduct): too many params specified: 3 param specs for its 2 learnable blobs`) {
			t.Errorf("%s: exit %d, log:\n%s", args[0], code, lastLines(log, 4))
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "three_iter_*")); len(files) != 0 {
		t.Errorf("the refused net still trained: %v", files)
	}
}

// TestHDF5OutputThroughTheCommand: gocaffe test with an HDF5Output layer
// appends every iteration's batch to its file, which h5py reads whole.
func TestHDF5OutputThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.h5")
	model := filepath.Join(dir, "dump.prototxt")
	text := fmt.Sprintf(`name: "dump"
layer { name: "d" type: "DummyData" top: "x" top: "y" dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 } data_filler { type: "gaussian" } data_filler { type: "constant" value: 7 } } }
layer { name: "out" type: "HDF5Output" bottom: "x" bottom: "y" hdf5_output_param { file_name: %q } }`, out)
	weights := filepath.Join(dir, "none.caffemodel")
	for path, b := range map[string][]byte{model: []byte(text), weights: nil} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, log := gocaffeLimited(t, "test", "-model", model, "-weights", weights, "-iterations", "200"); code != 0 || !strings.Contains(log, "Successfully saved 800 rows") {
		t.Fatalf("exit %d:\n%s", code, lastLines(log, 4))
	}
	res := h5pytest.Run(t, dir, `
import h5py
f = h5py.File('out.h5', 'r')
print(f['data'].shape, f['label'].shape, (f['label'][()] == 7).all())
`)
	if want := "(800, 3, 1, 1) (800, 1, 1, 1) True"; strings.TrimSpace(res) != want {
		t.Errorf("h5py reads %q, want %q", strings.TrimSpace(res), want)
	}
}
