package golden

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/internal/randnet"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// TestRandomSolversAgainstCaffe trains one small net with solvers drawn at
// random (every update rule, learning-rate policy, momentum, weight decay
// L1 and L2, per-parameter multipliers, gradient clipping, iter_size) in
// BVLC Caffe's `caffe train` and in gocaffe's solver, from the same
// weights on the same HDF5 data, and compares the weights and the solver's
// history at the end. GOCAFFE_CAFFE_BIN names Caffe's binary (the test is
// skipped without it); GOCAFFE_GOLDEN_RANDOM and
// GOCAFFE_GOLDEN_RANDOM_SEED are read as by TestRandomNetsAgainstCaffe.
func TestRandomSolversAgainstCaffe(t *testing.T) {
	caffe := os.Getenv("GOCAFFE_CAFFE_BIN")
	if caffe == "" {
		t.Skip("GOCAFFE_CAFFE_BIN is not set: the path of BVLC Caffe's caffe binary")
	}
	count, first := envInt(t, "GOCAFFE_GOLDEN_RANDOM", 100), envInt(t, "GOCAFFE_GOLDEN_RANDOM_SEED", 1)
	dir := t.TempDir()
	data := writeSolverData(t, dir)
	for seed := first; seed < first+count; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0x51ed2701))
		netText := solverNet(r, data)
		solverText, iters := randomSolver(r)
		t.Run(fmt.Sprintf("%d_%s", seed, solverType(solverText)), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the net:\n%s\nthe solver:\n%s", netText, solverText)
				}
			})
			compareSolverRun(t, caffe, netText, solverText, iters)
		})
	}
}

// writeSolverData writes 12 rows of 4 features and 2 targets, which the
// HDF5Data layer reads in batches of 4 (three batches a pass).
func writeSolverData(t *testing.T, dir string) string {
	r := rand.New(rand.NewPCG(7, 7))
	x, y := make([]float32, 12*4), make([]float32, 12*2)
	for i := range x {
		x[i] = float32(r.Float64()*2 - 1)
	}
	for i := range y {
		y[i] = float32(r.Float64()*2 - 1)
	}
	b := hdf5.NewBuilder()
	if err := hdf5.CreateFloats(b.Root(), "data", []int{12, 4}, x); err != nil {
		t.Fatal(err)
	}
	if err := hdf5.CreateFloats(b.Root(), "label", []int{12, 2}, y); err != nil {
		t.Fatal(err)
	}
	h5 := filepath.Join(dir, "data.h5")
	if err := os.WriteFile(h5, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(list, []byte(h5+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

// solverNet is a two-layer regression net with random learning-rate and
// decay multipliers on its parameters.
func solverNet(r *rand.Rand, data string) string {
	spec := func() string {
		return fmt.Sprintf("param { lr_mult: %g decay_mult: %g }", randnet.Pick(r, 1.0, 1.0, 2.0, 0.5, 0.0), randnet.Pick(r, 1.0, 1.0, 0.0, 2.0))
	}
	return fmt.Sprintf(`name: "regress"
layer { name: "data" type: "HDF5Data" top: "data" top: "label" hdf5_data_param { source: %q batch_size: 4 } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "h" %s %s
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "uniform" min: -0.2 max: 0.2 } } }
layer { name: "act" type: "TanH" bottom: "h" top: "h" }
layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "guess" %s %s
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "uniform" min: -0.2 max: 0.2 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "label" top: "loss" }
`, data, spec(), spec(), spec(), spec())
}

// randomSolver draws a solver (without net and snapshot_prefix) and its
// number of iterations.
func randomSolver(r *rand.Rand) (string, int) {
	iters := randnet.Between(r, 3, 15)
	typ := randnet.Pick(r, "SGD", "SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam")
	var f []string
	add := func(format string, args ...any) { f = append(f, fmt.Sprintf(format, args...)) }
	add("type: %q", typ)
	switch typ {
	case "SGD", "Nesterov":
		add("base_lr: %g", randnet.Pick(r, 0.05, 0.1, 0.01))
		if typ == "Nesterov" || r.IntN(3) > 0 {
			add("momentum: %g", randnet.Pick(r, 0.9, 0.5, 0.99))
		}
	case "AdaGrad":
		add("base_lr: %g", randnet.Pick(r, 0.05, 0.2))
	case "RMSProp":
		add("base_lr: %g rms_decay: %g", randnet.Pick(r, 0.01, 0.05), randnet.Pick(r, 0.98, 0.9))
	case "AdaDelta":
		add("base_lr: %g momentum: %g", randnet.Pick(r, 1.0, 0.5), randnet.Pick(r, 0.95, 0.9))
	case "Adam":
		add("base_lr: %g momentum: 0.9 momentum2: %g", randnet.Pick(r, 0.01, 0.003), randnet.Pick(r, 0.999, 0.99))
	}
	if typ != "SGD" && typ != "Nesterov" && r.IntN(2) == 0 {
		add("delta: %g", randnet.Pick(r, 1e-6, 1e-4))
	}
	switch policy := randnet.Pick(r, "fixed", "step", "exp", "inv", "multistep", "poly", "sigmoid"); policy {
	case "fixed":
		add(`lr_policy: "fixed"`)
	case "step":
		add(`lr_policy: "step" gamma: %g stepsize: %d`, randnet.Pick(r, 0.5, 0.1), randnet.Between(r, 1, 5))
	case "exp":
		add(`lr_policy: "exp" gamma: %g`, randnet.Pick(r, 0.9, 0.99))
	case "inv":
		add(`lr_policy: "inv" gamma: %g power: %g`, randnet.Pick(r, 0.1, 0.01), randnet.Pick(r, 0.75, 1.5))
	case "multistep":
		add(`lr_policy: "multistep" gamma: %g stepvalue: %d stepvalue: %d`, randnet.Pick(r, 0.5, 0.2), randnet.Between(r, 1, 3), randnet.Between(r, 4, 8))
	case "poly":
		add(`lr_policy: "poly" power: %g`, randnet.Pick(r, 0.5, 2.0))
	case "sigmoid":
		add(`lr_policy: "sigmoid" gamma: %g stepsize: %d`, randnet.Pick(r, 0.5, 2.0), randnet.Between(r, 2, 8))
	}
	if r.IntN(2) == 0 {
		add("weight_decay: %g", randnet.Pick(r, 0.01, 0.1))
		if r.IntN(2) == 0 {
			add(`regularization_type: %q`, randnet.Pick(r, "L1", "L2"))
		}
	}
	if r.IntN(3) == 0 {
		add("clip_gradients: %g", randnet.Pick(r, 0.1, 0.5))
	}
	if r.IntN(3) == 0 {
		add("iter_size: %d", randnet.Between(r, 2, 3))
	}
	add("max_iter: %d display: 0 random_seed: 1 solver_mode: CPU snapshot_after_train: true", iters)
	add("test_iter: %d test_interval: %d test_initialization: %v", randnet.Between(r, 1, 4), randnet.Between(r, 1, iters), r.IntN(2) == 0)
	add("snapshot: %d snapshot_format: %s", randnet.Between(r, 1, iters-1), randnet.Pick(r, "BINARYPROTO", "BINARYPROTO", "HDF5"))
	return strings.Join(f, "\n") + "\n", iters
}

func solverType(text string) string {
	typ, _, _ := strings.Cut(strings.TrimPrefix(text, `type: "`), `"`)
	return typ
}

// compareSolverRun trains in both and compares the final weights and
// histories; then each resumes from the other's snapshot at the solver's
// snapshot interval, and both runs must end where Caffe's own resume ends
// (a resume restarts the HDF5 data from its first row, so it is compared
// with a resume, not with the run straight through).
func compareSolverRun(t *testing.T, caffe, netText, solverText string, iters int) {
	dir := t.TempDir()
	netFile, init := writeNetAndWeights(t, dir, netText)
	write := func(prefix string) string {
		path := filepath.Join(dir, prefix+"_solver.prototxt")
		text := fmt.Sprintf("net: %q\nsnapshot_prefix: %q\n%s", netFile, filepath.Join(dir, prefix), solverText)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	out, caffeErr := runCaffe(caffe, write("caffe"), "--weights="+init)
	var goLog logtest.Recorder
	goErr := trainInGocaffeLogged(write("go"), init, "", goLog.Logger())
	switch {
	case caffeErr != nil && goErr == nil:
		t.Fatalf("Caffe refuses the solver (%v: %s), gocaffe trains with it", caffeErr, fatalLine(out))
	case caffeErr != nil:
		t.Skipf("Caffe refuses the solver (%v): %s; gocaffe too: %v", caffeErr, fatalLine(out), goErr)
	case goErr != nil:
		t.Fatalf("gocaffe: %v (Caffe trains)", goErr)
	}
	h5 := strings.Contains(solverText, "HDF5")
	snap := func(prefix string, iter int) snapshotFiles { return snapshotFilesOf(dir, prefix, iter, h5) }
	compareSnapshots(t, "straight through", snap("caffe", iters), snap("go", iters), netFile)
	var goLines []string
	for _, l := range goLog.Lines() {
		goLines = append(goLines, l.Message)
	}
	wantNames, want := testOutputs(strings.Split(out, "\n"))
	gotNames, got := testOutputs(goLines)
	compareTestOutputs(t, wantNames, want, gotNames, got)

	var every int
	fmt.Sscanf(solverText[strings.Index(solverText, "snapshot: "):], "snapshot: %d", &every)
	if out, err := runCaffe(caffe, write("caffe_r"), "--snapshot="+snap("caffe", every).state); err != nil {
		t.Fatalf("Caffe resuming from its snapshot: %v: %s", err, fatalLine(out))
	}
	if err := trainInGocaffe(write("go_r"), "", snap("caffe", every).state); err != nil {
		t.Fatalf("gocaffe resuming from Caffe's snapshot: %v", err)
	}
	if out, err := runCaffe(caffe, write("caffe_g"), "--snapshot="+snap("go", every).state); err != nil {
		t.Fatalf("Caffe resuming from gocaffe's snapshot: %v: %s", err, fatalLine(out))
	}
	compareSnapshots(t, "gocaffe resuming from Caffe's snapshot", snap("caffe_r", iters), snap("go_r", iters), netFile)
	compareSnapshots(t, "Caffe resuming from gocaffe's snapshot", snap("caffe_r", iters), snap("caffe_g", iters), netFile)
}

// runCaffe runs `caffe train` with the solver file and flag.
// Its log (on standard error) holds the test nets' outputs.
func runCaffe(caffe, solverFile, flag string) (string, error) {
	cmd := exec.Command(caffe, "train", "--solver="+solverFile, flag)
	cmd.Env = append(os.Environ(), "GLOG_minloglevel=0", "GLOG_logtostderr=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// snapshotFiles are a snapshot's weights and solver state.
type snapshotFiles struct{ model, state string }

func snapshotFilesOf(dir, prefix string, iter int, h5 bool) snapshotFiles {
	base := filepath.Join(dir, fmt.Sprintf("%s_iter_%d", prefix, iter))
	if h5 {
		return snapshotFiles{base + ".caffemodel.h5", base + ".solverstate.h5"}
	}
	return snapshotFiles{base + ".caffemodel", base + ".solverstate"}
}

// compareSnapshots compares two snapshots' weights (read into the net) and,
// in the binary format, their solver states.
func compareSnapshots(t *testing.T, what string, want, got snapshotFiles, netFile string) {
	t.Helper()
	wantParams, gotParams := loadedParams(t, netFile, want.model), loadedParams(t, netFile, got.model)
	for i, w := range wantParams {
		checkClose(t, fmt.Sprintf("%s: parameter %d", what, i), gotParams[i], w)
	}
	if strings.HasSuffix(want.state, ".h5") {
		return
	}
	compareHistories(t, what, want.state, got.state)
}

// loadedParams are the net's learnable parameters with the weights of
// model (a caffemodel of either format) copied in.
func loadedParams(t *testing.T, netFile, model string) [][]float32 {
	t.Helper()
	n, err := net.NewFromFile[float32](netFile, net.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.CopyTrainedLayersFromFile(model); err != nil {
		t.Fatal(err)
	}
	var params [][]float32
	for _, p := range n.LearnableParams() {
		params = append(params, slices.Clone(p.CPUData()))
	}
	return params
}

// trainInGocaffe runs the solver file from the weights in init, or
// resumes it from the solver state resume.
func trainInGocaffe(solverFile, init, resume string) error {
	return trainInGocaffeLogged(solverFile, init, resume, slog.New(slog.DiscardHandler))
}

// testOutput matches a test net's output line, Caffe's and gocaffe's:
// "Test net output #0: loss = 0.123 (* 1 = 0.123 loss)".
var testOutput = regexp.MustCompile(`Test net output #(\d+): (\S+) = (\S+)`)

// testOutputs are the test outputs a log reports, in order, as
// "#k name" and the value.
func testOutputs(lines []string) (names []string, values []float32) {
	for _, l := range lines {
		if m := testOutput.FindStringSubmatch(l); m != nil {
			v, err := strconv.ParseFloat(m[3], 32)
			if err != nil {
				v = math.NaN()
			}
			names, values = append(names, "#"+m[1]+" "+m[2]), append(values, float32(v))
		}
	}
	return names, values
}

// compareTestOutputs holds gocaffe's test outputs to Caffe's: the same
// tests of the same outputs, the values within solverTolerance.
func compareTestOutputs(t *testing.T, wantNames []string, want []float32, gotNames []string, got []float32) {
	t.Helper()
	if len(wantNames) == 0 { // test_interval <= max_iter: a test runs at least once
		t.Fatal("no test output in Caffe's log")
	}
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("test outputs %v, Caffe's %v", gotNames, wantNames)
	}
	for i := range want {
		checkClose(t, fmt.Sprintf("test output %d (%s)", i, wantNames[i]), got[i:i+1], want[i:i+1])
	}
}

// trainInGocaffeLogged is trainInGocaffe logging to log.
func trainInGocaffeLogged(solverFile, init, resume string, log *slog.Logger) error {
	s, err := solver.NewFromFile[float32](solverFile, solver.Options{Logger: log})
	if err != nil {
		return err
	}
	defer s.Close()
	if init != "" {
		if err := s.Net().CopyTrainedLayersFromFile(init); err != nil {
			return err
		}
	}
	return s.Solve(resume)
}

// writeNetAndWeights writes the net into dir and the fillers' weights both
// programs start from, and returns the two files.
func writeNetAndWeights(t *testing.T, dir, netText string) (netFile, init string) {
	t.Helper()
	netFile, init = filepath.Join(dir, "net.prototxt"), filepath.Join(dir, "init.caffemodel")
	if err := os.WriteFile(netFile, []byte(netText), 0o644); err != nil {
		t.Fatal(err)
	}
	writeInitialWeights(t, netFile, init)
	return netFile, init
}

// writeInitialWeights writes the fillers' weights of the net, which both
// trainings start from.
func writeInitialWeights(t *testing.T, netFile, path string) {
	n, err := net.NewFromFile[float32](netFile, net.Options{Seed: 5, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	b, err := proto.Marshal(n.ToProto(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// solverTolerance bounds the relative error of the weights and histories
// after up to 15 iterations of float32 arithmetic summed in other orders.
// The update rules amplify rounding: RMSProp with L1 decay and clipping
// left a weight 3.0e-4 from Caffe's after 15 iterations (seed 493), where
// gocaffe in float64 was 2.7e-4 from it, on the other side.
const solverTolerance = 1e-3

// solverFloor is the smallest scale a weight's error is measured on: the
// initial weights are of the order of 0.1 to 1.
const solverFloor = 1e-4

func compareHistories(t *testing.T, what, wantPath, gotPath string) {
	t.Helper()
	var want, got caffepb.SolverState
	readProto(t, wantPath, &want)
	readProto(t, gotPath, &got)
	if got.GetIter() != want.GetIter() || got.GetCurrentStep() != want.GetCurrentStep() {
		t.Errorf("%s: state at iteration %d, step %d; Caffe's at %d, %d", what, got.GetIter(), got.GetCurrentStep(), want.GetIter(), want.GetCurrentStep())
	}
	if len(got.GetHistory()) != len(want.GetHistory()) {
		t.Fatalf("%s: %d history blobs, Caffe's %d", what, len(got.GetHistory()), len(want.GetHistory()))
	}
	for i, h := range want.GetHistory() {
		checkClose(t, fmt.Sprintf("%s: history %d", what, i), blobValues(got.GetHistory()[i]), blobValues(h))
	}
}

// blobValues is a blob's float data, or its double data rounded.
func blobValues(b *caffepb.BlobProto) []float32 {
	if len(b.GetDoubleData()) == 0 {
		return b.GetData()
	}
	v := make([]float32, len(b.GetDoubleData()))
	for i, d := range b.GetDoubleData() {
		v[i] = float32(d)
	}
	return v
}

func readProto(t *testing.T, path string, m proto.Message) {
	t.Helper()
	if err := protoio.ReadProtoFromBinaryFile(path, m); err != nil {
		t.Fatal(err)
	}
}

// checkClose fails where got and want differ by more than solverTolerance,
// measured as TestGolden measures a blob, but on a scale of at least
// solverFloor: L1 decay keeps some weights oscillating about zero (a bias
// of two values both near 7e-6 after RMSProp, seed 1876), where rounding
// is all that is left of them.
func checkClose(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if e := relErrAtLeast(got, want, solverFloor); e.err > solverTolerance || math.IsNaN(e.err) {
		t.Errorf("%s: relative error %.3g at %d (gocaffe %v, Caffe %v)%s", what, e.err, e.at, e.got, e.want, e.note)
	}
}

// TestInvalidSolversAgainstCaffe: solvers that Caffe refuses (a CHECK or a
// fatal log before or during the first iteration) are refused by gocaffe
// too, rather than trained in some way of its own. GOCAFFE_CAFFE_BIN as
// above.
func TestInvalidSolversAgainstCaffe(t *testing.T) {
	caffe := os.Getenv("GOCAFFE_CAFFE_BIN")
	if caffe == "" {
		t.Skip("GOCAFFE_CAFFE_BIN is not set: the path of BVLC Caffe's caffe binary")
	}
	dir := t.TempDir()
	netText := solverNet(rand.New(rand.NewPCG(1, 1)), writeSolverData(t, dir))
	const tail = "max_iter: 3 display: 0 solver_mode: CPU snapshot_after_train: true\n"
	for name, solverText := range map[string]string{
		"AdaGrad with momentum":    `type: "AdaGrad" base_lr: 0.1 lr_policy: "fixed" momentum: 0.9 `,
		"RMSProp with momentum":    `type: "RMSProp" base_lr: 0.1 lr_policy: "fixed" momentum: 0.5 `,
		"step without stepsize":    `base_lr: 0.1 lr_policy: "step" gamma: 0.5 `,
		"step with negative gamma": `base_lr: 0.1 lr_policy: "step" gamma: -0.5 stepsize: 2 `,
		"exp with negative gamma":  `base_lr: 0.1 lr_policy: "exp" gamma: -1 `,
		"unknown policy":           `base_lr: 0.1 lr_policy: "cosine" `,
		"unknown regularization":   `base_lr: 0.1 lr_policy: "fixed" weight_decay: 0.1 regularization_type: "L3" `,
		"unknown type":             `type: "LBFGS" base_lr: 0.1 lr_policy: "fixed" `,
		"sigmoid without stepsize": `base_lr: 0.1 lr_policy: "sigmoid" gamma: 0.5 `,
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			sub := t.TempDir()
			netFile, init := writeNetAndWeights(t, sub, netText)
			solverFile := filepath.Join(sub, "solver.prototxt")
			text := fmt.Sprintf("net: %q\nsnapshot_prefix: %q\n%s%s", netFile, filepath.Join(sub, "s"), solverText, tail)
			if err := os.WriteFile(solverFile, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(caffe, "train", "--solver="+solverFile, "--weights="+init)
			cmd.Env = append(os.Environ(), "GLOG_minloglevel=1")
			out, caffeErr := cmd.CombinedOutput()
			goErr := trainInGocaffe(solverFile, init, "")
			switch {
			case caffeErr == nil:
				t.Errorf("Caffe trains with it: the case is not one Caffe refuses (gocaffe: %v)", goErr)
			case goErr == nil:
				t.Errorf("Caffe refuses it (%s), gocaffe trains with it", fatalLine(string(out)))
			default:
				t.Logf("Caffe: %s\ngocaffe: %v", fatalLine(string(out)), goErr)
			}
		})
	}
}
