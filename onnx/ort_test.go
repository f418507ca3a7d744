package onnx

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The exported models are checked by real ONNX tooling, never by our own
// reading of ONNX: ONNX Runtime (the npm package onnxruntime-node, run by
// testdata/ort/run.js under Node) computes the outputs, and the onnx
// package's checker (Debian's python3-onnx) checks the files. .ci/run
// installs both and sets GOCAFFE_REQUIRE_ONNX_TOOLS=1, which turns their
// absence into a failure instead of a skip.

// ortDir is where testdata/ort's node_modules were installed
// (`npm ci --ignore-scripts` there); GOCAFFE_ORT_DIR overrides it.
func ortDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GOCAFFE_ORT_DIR")
	if dir == "" {
		dir, _ = filepath.Abs("testdata/ort")
	}
	_, errNode := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node")); err != nil || errNode != nil {
		missing(t, "ONNX Runtime for Node (node, and `npm ci --ignore-scripts` in onnx/testdata/ort)")
	}
	return dir
}

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("GOCAFFE_REQUIRE_ONNX_TOOLS") != "" {
		t.Fatalf("%s is not installed, and GOCAFFE_REQUIRE_ONNX_TOOLS is set", what)
	}
	t.Skipf("%s is not installed", what)
}

// tensor is a named float32 array with its shape.
type tensor struct {
	name  string
	shape []int
	data  []float32
}

// runORT runs model in ONNX Runtime on inputs, with all of the runtime's
// graph optimisations or none, and returns its outputs in the model's
// order.
func runORT(t testing.TB, model []byte, inputs []tensor, optimize bool) []tensor {
	t.Helper()
	dir := ortDir(t)
	work := t.TempDir()
	modelPath := filepath.Join(work, "model.onnx")
	if err := os.WriteFile(modelPath, model, 0o666); err != nil {
		t.Fatal(err)
	}
	type inputSpec struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		File  string `json:"file"`
	}
	job := struct {
		Model    string      `json:"model"`
		Inputs   []inputSpec `json:"inputs"`
		Out      string      `json:"out"`
		Optimize bool        `json:"optimize"`
	}{Model: modelPath, Out: work, Optimize: optimize}
	for i, in := range inputs {
		file := filepath.Join(work, fmt.Sprintf("in%d.bin", i))
		if err := os.WriteFile(file, float32Bytes(in.data), 0o666); err != nil {
			t.Fatal(err)
		}
		job.Inputs = append(job.Inputs, inputSpec{in.name, in.shape, file})
	}
	jobPath := filepath.Join(work, "job.json")
	js, _ := json.Marshal(job)
	if err := os.WriteFile(jobPath, js, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "run.js"), jobPath)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ONNX Runtime failed: %v\n%s", err, out)
	}
	listing, err := os.ReadFile(filepath.Join(work, "outputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var outs []struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		Type  string `json:"type"`
	}
	if err := json.Unmarshal(listing, &outs); err != nil {
		t.Fatal(err)
	}
	var result []tensor
	for i, o := range outs {
		if o.Type != "float32" {
			t.Fatalf("output %s is %s, want float32", o.Name, o.Type)
		}
		raw, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("%d.bin", i)))
		if err != nil {
			t.Fatal(err)
		}
		result = append(result, tensor{o.Name, o.Shape, bytesFloat32(raw)})
	}
	return result
}

// checkONNX runs the onnx package's checker, with shape inference, on the
// model.
func checkONNX(t testing.TB, model []byte) {
	t.Helper()
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import onnx").Run(); err != nil {
		missing(t, "the onnx checker (Debian: python3-onnx)")
	}
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(path, model, 0o666); err != nil {
		t.Fatal(err)
	}
	script := `import sys, onnx
m = onnx.load(sys.argv[1])
opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
if opset > onnx.defs.onnx_opset_version():
    print("onnx %s checks opsets up to %d, not %d" % (onnx.__version__, onnx.defs.onnx_opset_version(), opset))
    sys.exit(0)
onnx.checker.check_model(m, full_check=True)
onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("the onnx checker refused the model: %v\n%s", err, out)
	}
	if len(out) > 0 {
		// An opset newer than the checker knows: ONNX Runtime, which
		// checks the model as it loads it, is then the only check.
		t.Logf("checker skipped: %s", out)
	}
}

// relativeError compares got with want: the largest difference over the
// largest magnitude of want, so that values near zero, where float32
// sums of many terms keep only an absolute accuracy, are judged at the
// scale of the output they belong to.
func relativeError(got, want []float32) float64 {
	var diff, scale float64
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		diff = max(diff, d)
		scale = max(scale, math.Abs(float64(want[i])))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

func float32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesFloat32(b []byte) []float32 {
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, "x")
}
