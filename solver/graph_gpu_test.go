package solver_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
	"google.golang.org/protobuf/proto"
)

// graphNet refills Gaussian DummyData every iteration and has the layers a
// recorded iteration must replay faithfully: convolutions, batch
// normalization, a residual sum, pooling, dropout (new masks every
// iteration through the RNG salt) and a loss normalised on the device.
const graphNet = `
net_param {
  name: "graph"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 16 dim: 3 dim: 8 dim: 8 } shape { dim: 16 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 2 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "sc1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "sum" type: "Eltwise" bottom: "conv1" bottom: "conv2" top: "sum" }
  layer { name: "pool" type: "Pooling" bottom: "sum" top: "pool" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "ip1" type: "InnerProduct" bottom: "pool" top: "ip1"
    inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "drop" type: "Dropout" bottom: "ip1" top: "ip1" dropout_param { dropout_ratio: 0.3 } }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
}
base_lr: 0.05 momentum: 0.9 weight_decay: 0.001 lr_policy: "step" gamma: 0.5 stepsize: 3
display: 1 random_seed: 11 snapshot_after_train: false
`

// graphRun trains a solver of text on ctx and returns it with its log.
func graphRun(t *testing.T, ctx *device.Context, text string, graphs bool, steps func(*solver.Solver[float32]) error) (*solver.Solver[float32], string) {
	t.Helper()
	return graphRunWith(t, text, solver.Options{Context: ctx, NoCUDAGraphs: !graphs}, steps)
}

// graphRunWith is graphRun with the solver's options.
func graphRunWith(t *testing.T, text string, opts solver.Options, steps func(*solver.Solver[float32]) error) (*solver.Solver[float32], string) {
	t.Helper()
	var buf bytes.Buffer
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	s, err := solver.New[float32](p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := steps(s); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	return s, buf.String()
}

// lossLines returns the log's "Iteration N ..., loss = L" values.
func lossLines(t *testing.T, log string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range regexp.MustCompile(`Iteration \d+ \([^)]*\), loss = ([0-9.e+-]+|NaN)`).FindAllStringSubmatch(log, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// sameLosses fails unless both logs have n loss lines that agree within
// 1e-5 relative, and returns the first log's.
func sameLosses(t *testing.T, glog, elog string, n int) []float64 {
	t.Helper()
	gl, el := lossLines(t, glog), lossLines(t, elog)
	if len(gl) != n || len(el) != n {
		t.Fatalf("%d and %d loss lines, want %d", len(gl), len(el), n)
	}
	for i := range gl {
		if math.Abs(gl[i]-el[i]) > 1e-5*(1+math.Abs(el[i])) {
			t.Errorf("iteration %d: loss %v with the graph, %v without", i, gl[i], el[i])
		}
	}
	return gl
}

// closeParams fails unless the two solvers' learnable parameters agree
// within tol (relative to 1 + |value|).
func closeParams(t *testing.T, a, b *solver.Solver[float32], tol float64) {
	t.Helper()
	pa, pb := a.Net().LearnableParams(), b.Net().LearnableParams()
	worst := 0.0
	for i := range pa {
		x, y := pa[i].CPUData(), pb[i].CPUData()
		for j := range x {
			worst = max(worst, math.Abs(float64(x[j])-float64(y[j]))/(1+math.Abs(float64(y[j]))))
		}
	}
	if !(worst <= tol) {
		t.Errorf("parameters differ by up to %g (tolerance %g)", worst, tol)
	}
}

// A training run that replays a recorded CUDA graph gives the losses and
// weights of the same run without graphs: the data layer's new batch, the
// dropout masks (the salt), the step learning rate and the weight decay
// all reach the replays. SGD alone records the whole iteration; another
// solver type, iter_size 2 (a replay per pass, new masks each) and
// clip_gradients record the passes and update as written. And the log
// says what was recorded.
func TestCUDAGraphMatchesEager(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	// Adam divides each gradient by its own running size, so the last-bit
	// differences the GPU's reductions leave between any two runs (with or
	// without graphs) grow to about 1e-4 in the weights whose gradients are
	// near zero; its losses still agree to 1e-5.
	for _, c := range []struct {
		name, extra, recorded string
		tol                   float64
	}{
		{"SGD", "", "the whole iteration with the update", 1e-5},
		{"Adam", `type: "Adam" momentum2: 0.999`, "the passes", 2e-3},
		{"iter_size", `iter_size: 2`, "the passes", 1e-5},
		{"clip", `clip_gradients: 0.5`, "the passes", 1e-5},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := graphNet + c.extra
			if c.name == "Adam" {
				text = strings.Replace(text, "base_lr: 0.05", "base_lr: 0.002", 1)
			}
			step := func(s *solver.Solver[float32]) error { return s.Step(9) }
			g, glog := graphRun(t, ctx, text, true, step)
			e, elog := graphRun(t, ctx, text, false, step)
			if !strings.Contains(glog, "Iteration 2: recorded as a CUDA graph") || !strings.Contains(glog, c.recorded) {
				t.Fatalf("the graph run did not record %s at iteration 2:\n%s", c.recorded, glog)
			}
			if !strings.Contains(elog, "Training without CUDA graphs: turned off") {
				t.Errorf("the run without graphs does not say so:\n%s", elog)
			}
			gl := sameLosses(t, glog, elog, 9)
			if gl[3] == gl[4] && gl[4] == gl[5] {
				t.Errorf("replayed iterations give the same loss %v: the batches or masks do not change", gl[3])
			}
			closeParams(t, g, e, c.tol)
		})
	}
}

// inputNet takes its data from the host (an Input layer), so that a test
// can change it, its shape and the weights between steps.
const inputNet = `
net_param {
  name: "input"
  layer { name: "data" type: "Input" top: "data" top: "label"
    input_param { shape { dim: 16 dim: 12 } shape { dim: 16 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
    inner_product_param { num_output: 8 weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "constant" value: 0.1 } } }
  layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
}
base_lr: 0.1 momentum: 0.9 lr_policy: "fixed" display: 1 random_seed: 3 snapshot_after_train: false
`

// fillInput sets the Input layer's tops for a batch of n.
func fillInput(s *solver.Solver[float32], n int, seed uint64) error {
	data, label := s.Net().BlobByName("data"), s.Net().BlobByName("label")
	if err := data.Reshape([]int{n, 12}); err != nil {
		return err
	}
	if err := label.Reshape([]int{n}); err != nil {
		return err
	}
	mathfn.RngGaussian(data.Count(), 0, 1, data.MutableCPUData(), mathfn.NewRNG(seed))
	labels := label.MutableCPUData()
	for i := range labels {
		labels[i] = float32((seed + uint64(i)) % 5)
	}
	return s.Net().Reshape()
}

// What the host writes between steps reaches a replayed graph (new data,
// a weight changed on the host), and a change of shape drops the graph and
// records it again: the results stay those of a run without graphs.
func TestCUDAGraphHostChangesAndReshape(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	steps := func(s *solver.Solver[float32]) error {
		if err := fillInput(s, 16, 1); err != nil {
			return err
		}
		if err := s.Step(4); err != nil {
			return err
		}
		if err := fillInput(s, 16, 2); err != nil {
			return err
		}
		s.Net().LearnableParams()[0].MutableCPUData()[3] += 0.5
		if err := s.Step(3); err != nil {
			return err
		}
		if err := fillInput(s, 8, 3); err != nil {
			return err
		}
		return s.Step(5)
	}
	g, glog := graphRun(t, ctx, inputNet, true, steps)
	e, _ := graphRun(t, ctx, inputNet, false, steps)
	if n := strings.Count(glog, "recorded as a CUDA graph"); n != 2 {
		t.Errorf("recorded %d times, want 2 (before and after the reshape):\n%s", n, glog)
	}
	if !strings.Contains(glog, "recording its CUDA graph again") {
		t.Errorf("the reshape is not logged:\n%s", glog)
	}
	closeParams(t, g, e, 1e-5)
}

// A label that is no class, arriving after the graph was recorded, stops
// training with an error that names it, as without graphs.
func TestCUDAGraphBadLabel(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	var buf bytes.Buffer
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(inputNet), p); err != nil {
		t.Fatal(err)
	}
	s, err := solver.New[float32](p, solver.Options{Context: ctx, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := fillInput(s, 16, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Step(4); err != nil {
		t.Fatal(err)
	}
	s.Net().BlobByName("label").MutableCPUData()[5] = 7
	err = s.Step(1)
	if err == nil || !strings.Contains(err.Error(), "label 7 at position 5") {
		t.Fatalf("Step = %v, want the bad label named\n%s", err, buf.String())
	}
}

// A net with a layer not known to replay faithfully trains without a
// graph, and the log names the layer.
func TestCUDAGraphRefusesUnknownLayer(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	text := strings.Replace(inputNet, `type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label"`,
		`type: "SigmoidCrossEntropyLoss" bottom: "ip2" bottom: "target"`, 1)
	text = strings.Replace(text, `top: "data" top: "label"
    input_param { shape { dim: 16 dim: 12 } shape { dim: 16 } }`, `top: "data" top: "target"
    input_param { shape { dim: 16 dim: 12 } shape { dim: 16 dim: 5 } }`, 1)
	_, log := graphRun(t, ctx, text, true, func(s *solver.Solver[float32]) error { return s.Step(4) })
	if !strings.Contains(log, `Training without CUDA graphs`) || !strings.Contains(log, `SigmoidCrossEntropyLoss`) {
		t.Errorf("the log does not say why there is no graph:\n%s", log)
	}
	if strings.Contains(log, "recorded as a CUDA graph") {
		t.Errorf("recorded a graph:\n%s", log)
	}
}

// Tests between iterations, in test nets of their own or computing in the
// train net's activation memory (share_test_memory), leave the replays
// right: the test outputs, losses and weights are those of runs without
// graphs.
func TestCUDAGraphWithTestNets(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	rate := regexp.MustCompile(`\([0-9.e+-]+ iter/s, [^)]*\)`)
	for _, share := range []bool{false, true} {
		run := func(graphs bool) (*solver.Solver[float32], []string, string) {
			var buf bytes.Buffer
			p := &caffepb.SolverParameter{}
			if err := protoio.ParseText([]byte(shareNet), p); err != nil {
				t.Fatal(err)
			}
			s, err := solver.New[float32](p, solver.Options{Context: ctx, ShareTestMemory: share, NoCUDAGraphs: !graphs,
				Logger: slog.New(slog.NewTextHandler(&buf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if err := s.Solve(""); err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			var lines []string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "output") {
					_, msg, _ := strings.Cut(l, "msg=")
					lines = append(lines, rate.ReplaceAllString(msg, ""))
				}
			}
			return s, lines, buf.String()
		}
		g, glines, glog := run(true)
		e, elines, _ := run(false)
		if !strings.Contains(glog, "recorded as a CUDA graph") {
			t.Fatalf("share %v: no graph recorded:\n%s", share, glog)
		}
		if len(glines) != len(elines) || len(glines) < 20 {
			t.Fatalf("share %v: %d and %d output lines", share, len(glines), len(elines))
		}
		for i := range glines {
			if glines[i] != elines[i] && !nearlySameLine(glines[i], elines[i]) {
				t.Errorf("share %v: line %d: %q with the graph, %q without", share, i, glines[i], elines[i])
			}
		}
		closeParams(t, g, e, 1e-5)
	}
}

// nearlySameLine reports whether two log lines differ only in numbers
// within 1e-5 relative.
func nearlySameLine(a, b string) bool {
	num := regexp.MustCompile(`-?[0-9][0-9.e+-]*`)
	if num.ReplaceAllString(a, "#") != num.ReplaceAllString(b, "#") {
		return false
	}
	x, y := num.FindAllString(a, -1), num.FindAllString(b, -1)
	for i := range x {
		u, err1 := strconv.ParseFloat(x[i], 64)
		v, err2 := strconv.ParseFloat(y[i], 64)
		if err1 != nil || err2 != nil || math.Abs(u-v) > 1e-5*(1+math.Abs(v)) {
			return x[i] == y[i]
		}
	}
	return true
}

// A run resumed from a snapshot taken while replaying a graph continues
// as the uninterrupted run does: the weights, the momentum history, the
// learning rate step and the dropout masks (seeded by iteration through
// the salt) all carry over.
func TestCUDAGraphSnapshotResume(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	dir := t.TempDir()
	text := graphNet + `snapshot: 5 snapshot_prefix: "` + dir + `/g"`
	full, _ := graphRun(t, ctx, text, true, func(s *solver.Solver[float32]) error { return s.Step(9) })
	resumed, log := graphRun(t, ctx, text, true, func(s *solver.Solver[float32]) error {
		if err := s.Restore(dir + "/g_iter_5.solverstate"); err != nil {
			return err
		}
		return s.Step(4)
	})
	if !strings.Contains(log, "recorded as a CUDA graph") {
		t.Fatalf("the resumed run recorded no graph:\n%s", log)
	}
	closeParams(t, full, resumed, 1e-5)
}

// dataNet reads 64 random datums from an LMDB database through a Data
// layer, whose GPU tops read each prefetched batch where it lies.
const dataNet = `
net_param {
  name: "lmdb"
  layer { name: "data" type: "Data" top: "data" top: "label"
    transform_param { scale: 0.0078125 mirror: true }
    data_param { source: "SOURCE" batch_size: 16 backend: LMDB } }
  layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
    convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
  layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
}
base_lr: 0.02 momentum: 0.9 lr_policy: "fixed" display: 1 random_seed: 7 snapshot_after_train: false
`

// writeDatums writes n random 3x8x8 datums with labels 0-4 to a new LMDB
// database and returns its path.
func writeDatums(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lmdb")
	db, err := data.Open(caffepb.DataParameter_LMDB, path, data.New)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	r := mathfn.NewRNG(9)
	for i := range n {
		pix := make([]byte, 3*8*8)
		for j := range pix {
			pix[j] = byte(r.Uint64())
		}
		d := &caffepb.Datum{Channels: proto.Int32(3), Height: proto.Int32(8), Width: proto.Int32(8), Data: pix, Label: proto.Int32(int32(i % 5))}
		v, err := proto.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Data layer's batches reach the replays (each copied to the address the
// graph was recorded with), so one recording serves the whole run, and the
// results are those of a run without graphs.
func TestCUDAGraphDataLayer(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	text := strings.Replace(dataNet, "SOURCE", writeDatums(t, 64), 1)
	step := func(s *solver.Solver[float32]) error { return s.Step(14) }
	g, glog := graphRun(t, ctx, text, true, step)
	e, elog := graphRun(t, ctx, text, false, step)
	if n := strings.Count(glog, "recorded as a CUDA graph"); n != 1 || strings.Contains(glog, "again") {
		t.Fatalf("recorded %d times, want once:\n%s", n, glog)
	}
	sameLosses(t, glog, elog, 14)
	closeParams(t, g, e, 1e-5)
}

// A data layer whose batches change shape mid-run (ImageData, one image a
// batch, without resizing: twelve 10x10 images, then twelve 14x14) makes
// the graph stale after the data layer has run: that iteration finishes
// as written, the graph is recorded again later, and the results stay
// those of a run without graphs.
func TestCUDAGraphDataChangesShape(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	dir := t.TempDir()
	var list strings.Builder
	r := mathfn.NewRNG(4)
	for i := range 24 {
		size := 10
		if i >= 12 {
			size = 14
		}
		img := image.NewRGBA(image.Rect(0, 0, size, size))
		for j := range img.Pix {
			img.Pix[j] = byte(r.Uint64())
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("img%02d.png", i)
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&list, "%s %d\n", name, i%3)
	}
	listFile := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text := `
net_param {
  name: "sizes"
  layer { name: "data" type: "ImageData" top: "data" top: "label"
    transform_param { scale: 0.0078125 }
    image_data_param { source: "` + listFile + `" root_folder: "` + dir + `/" batch_size: 1 } }
  layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
    convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
  layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" pooling_param { pool: AVE global_pooling: true } }
  layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
    inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
}
base_lr: 0.05 momentum: 0.9 lr_policy: "fixed" display: 1 random_seed: 2 snapshot_after_train: false
`
	step := func(s *solver.Solver[float32]) error { return s.Step(24) }
	g, glog := graphRun(t, ctx, text, true, step)
	e, elog := graphRun(t, ctx, text, false, step)
	if !strings.Contains(glog, "Iteration 12: the net's shapes or device memory changed") {
		t.Errorf("the change of shape at iteration 12 is not logged:\n%s", glog)
	}
	if n := strings.Count(glog, "recorded as a CUDA graph"); n != 2 {
		t.Errorf("recorded %d times, want 2 (before and after the change):\n%s", n, glog)
	}
	sameLosses(t, glog, elog, 24)
	closeParams(t, g, e, 1e-5)
}
