// Command infer prepares and times the inference comparisons of
// docs/performance.md: gocaffe's forward pass against OpenCV's dnn module
// (opencv_bench.py beside it) on the same prototxt, weights and input.
//
//	go run ./tools/infer weights -model deploy.prototxt -batch 10 -o dir/  # dir/weights.caffemodel, dir/input.npy
//	go run ./tools/infer time -model deploy.prototxt -weights dir/weights.caffemodel -input dir/input.npy -iterations 20 -out dir/gocaffe.npy
//
// The weights are the net's fillers' (seeded), with every BatchNorm's
// statistics set to mean 0 and variance 1 (a fresh BatchNorm's are 0,
// which divides by sqrt(eps)); the input is uniform in [-1, 1). time
// prints one line, "median_ms <m> min_ms <m> iterations <n>", and writes
// the net's first output blob as a .npy file for the Python side to
// compare.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func main() {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: infer weights|time [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "weights":
		err = runWeights(os.Args[2:])
	case "time":
		err = runTime(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want weights or time", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "infer:", err)
		os.Exit(1)
	}
}

func testState() *caffepb.NetState { return &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()} }

// input returns the net's first input blob (the Input layer's top).
func input(n *net.Net[float32]) (*blob.Blob[float32], error) {
	for i, l := range n.Layers() {
		if l.Type() == "Input" {
			return n.Tops(i)[0], nil
		}
	}
	return nil, errors.New("the net has no Input layer")
}

// withBatch reshapes the net's input to batch images.
func withBatch(n *net.Net[float32], batch int) (*blob.Blob[float32], error) {
	in, err := input(n)
	if err != nil {
		return nil, err
	}
	shape := slices.Clone(in.Shape())
	shape[0] = batch
	if err := in.Reshape(shape); err != nil {
		return nil, err
	}
	return in, n.Reshape()
}

func runWeights(args []string) error {
	fs := flag.NewFlagSet("weights", flag.ContinueOnError)
	model := fs.String("model", "", "deploy prototxt")
	batch := fs.Int("batch", 1, "images in the input")
	out := fs.String("o", "", "output directory")
	seed := fs.Int64("seed", 1701, "filler and input seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" || *out == "" {
		return errors.New("weights needs -model and -o")
	}
	n, err := net.NewFromFile[float32](*model, net.Options{State: testState(), Seed: *seed})
	if err != nil {
		return err
	}
	for _, l := range n.Layers() {
		if l.Type() != "BatchNorm" {
			continue
		}
		b := l.LayerBase().Blobs()
		clear(b[0].MutableCPUData())
		for i := range b[1].MutableCPUData() {
			b[1].MutableCPUData()[i] = 1
		}
		b[2].MutableCPUData()[0] = 1
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), filepath.Join(*out, "weights.caffemodel")); err != nil {
		return err
	}
	// The Softmax's input, where the outputs are compared before
	// softmax saturates them: the producing layer's name (what OpenCV's
	// forward takes) and the blob's.
	logits := ""
	for i, l := range n.Layers() {
		if l.Type() != "Softmax" {
			continue
		}
		b := n.Bottoms(i)[0]
		for j := i - 1; j >= 0 && logits == ""; j-- {
			for _, t := range n.Tops(j) {
				if t == b {
					logits = n.LayerNames()[j] + " " + blobName(n, b) + "\n"
				}
			}
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "logits.txt"), []byte(logits), 0o644); err != nil {
		return err
	}
	in, err := withBatch(n, *batch)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(*seed), 7))
	x := in.MutableCPUData()
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
	}
	return writeNPY(filepath.Join(*out, "input.npy"), in.Shape(), x)
}

func blobName(n *net.Net[float32], b *blob.Blob[float32]) string {
	for i, x := range n.Blobs() {
		if x == b {
			return n.BlobNames()[i]
		}
	}
	return ""
}

func runTime(args []string) error {
	fs := flag.NewFlagSet("time", flag.ContinueOnError)
	model := fs.String("model", "", "deploy prototxt")
	weights := fs.String("weights", "", "caffemodel")
	inPath := fs.String("input", "", "input .npy")
	iterations := fs.Int("iterations", 20, "timed forward passes")
	warmup := fs.Int("warmup", 2, "untimed forward passes first")
	outPath := fs.String("out", "", "write the first output blob here (.npy)")
	blobName := fs.String("blob", "", "the blob to write (default: the first output)")
	noFold := fs.Bool("nofold", false, "run the net unfolded (net.Options.NoFold)")
	noWinograd := fs.Bool("nowinograd", false, "keep 3x3 convolutions on im2col and GEMM (net.Options.NoWinograd)")
	against := fs.String("against", "", "alternate each timed pass with one of the same net built otherwise (nowinograd or nofold), and print its times too: an A/B measure that drifts of the machine's load affect alike")
	perLayer := fs.Bool("layers", false, "then time each layer (with the layers its fold computes) over as many passes and print their medians")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed passes to this file (go tool pprof reads it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	shape, x, err := readNPY(*inPath)
	if err != nil {
		return err
	}
	opts := net.Options{State: testState(), Seed: 1, NoFold: *noFold, NoWinograd: *noWinograd}
	n, err := loadNet(*model, *weights, opts, shape, x)
	if err != nil {
		return err
	}
	var other *net.Net[float32]
	if *against != "" {
		o := opts
		switch *against {
		case "nowinograd":
			o.NoWinograd = true
		case "nofold":
			o.NoFold = true
		default:
			return fmt.Errorf("-against %q: want nowinograd or nofold", *against)
		}
		if other, err = loadNet(*model, *weights, o, shape, x); err != nil {
			return err
		}
		for range *warmup {
			if _, err := other.Forward(); err != nil {
				return err
			}
		}
	}
	for range *warmup {
		if _, err := n.Forward(); err != nil {
			return err
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer f.Close()
		defer pprof.StopCPUProfile() // before the file closes: deferred calls run last first
	}
	times := make([]float64, *iterations)
	var otherTimes []float64
	for i := range times {
		if times[i], err = timePass(n); err != nil {
			return err
		}
		if other != nil {
			t, err := timePass(other)
			if err != nil {
				return err
			}
			otherTimes = append(otherTimes, t)
		}
	}
	printTimes("", times)
	if other != nil {
		printTimes(*against+"_", otherTimes)
	}
	if *perLayer {
		if err := timeLayers(n, *iterations); err != nil {
			return err
		}
	}
	if *outPath != "" {
		out := n.OutputBlobs()[0]
		if *blobName != "" {
			if out = n.BlobByName(*blobName); out == nil {
				return fmt.Errorf("no blob %q", *blobName)
			}
		}
		return writeNPY(*outPath, out.Shape(), out.CPUData())
	}
	return nil
}

// loadNet builds the net with opts, loads the weights (if any) and sets
// its input to x of the given shape.
func loadNet(model, weights string, opts net.Options, shape []int, x []float32) (*net.Net[float32], error) {
	n, err := net.NewFromFile[float32](model, opts)
	if err != nil {
		return nil, err
	}
	if weights != "" {
		if err := n.CopyTrainedLayersFromFile(weights); err != nil {
			return nil, err
		}
	}
	in, err := withBatch(n, shape[0])
	if err != nil {
		return nil, err
	}
	if !slices.Equal(in.Shape(), shape) {
		return nil, fmt.Errorf("input %v, the net's is %v", shape, in.Shape())
	}
	copy(in.MutableCPUData(), x)
	return n, nil
}

// timePass returns one forward pass's time in ms.
func timePass(n *net.Net[float32]) (float64, error) {
	start := time.Now()
	_, err := n.Forward()
	return float64(time.Since(start).Microseconds()) / 1000, err
}

// printTimes prints the median, least and every time of passes, the
// keys prefixed.
func printTimes(prefix string, times []float64) {
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	fmt.Printf("%smedian_ms %.3f %smin_ms %.3f iterations %d times %s\n", prefix, median(sorted), prefix, sorted[0], len(times), joinMS(times))
}

// timeLayers prints each layer's median forward time over passes
// passes, stepping through the net with ForwardFromTo: a producer with
// the layers its fold computes (the plan's ComputedBy) as one step, so
// that the fold is not cut.
func timeLayers(n *net.Net[float32], passes int) error {
	plan := n.Plan()
	type step struct {
		lo, hi int
		times  []float64
	}
	var steps []step
	for i := 0; i < len(plan.Layers); i++ {
		hi := i
		for hi+1 < len(plan.Layers) && plan.Layers[hi+1].ComputedBy == plan.Layers[i].Name {
			hi++
		}
		steps = append(steps, step{lo: i, hi: hi})
		i = hi
	}
	for range passes {
		for s := range steps {
			start := time.Now()
			if _, err := n.ForwardFromTo(steps[s].lo, steps[s].hi); err != nil {
				return err
			}
			steps[s].times = append(steps[s].times, float64(time.Since(start).Microseconds())/1000)
		}
	}
	for _, s := range steps {
		slices.Sort(s.times)
		l := plan.Layers[s.lo]
		top := ""
		if tops := n.Tops(s.lo); len(tops) > 0 {
			top = tops[0].ShapeString()
		}
		fmt.Printf("layer %-28s %-20s %-22s %8.3f ms\n", l.Name, l.Type, top, median(s.times))
	}
	return nil
}

func median(sorted []float64) float64 {
	m := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[m]
	}
	return (sorted[m-1] + sorted[m]) / 2
}

func joinMS(t []float64) string {
	s := make([]string, len(t))
	for i, v := range t {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, ",")
}

// writeNPY writes a C-ordered little-endian float32 array in NumPy's .npy
// format (version 1.0).
func writeNPY(path string, shape []int, data []float32) error {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	buf := make([]byte, 0, 10+len(header)+4*len(data))
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(header)))
	buf = append(buf, header...)
	for _, v := range data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	return os.WriteFile(path, buf, 0o644)
}

// readNPY reads what writeNPY writes.
func readNPY(path string) ([]int, []float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, nil, fmt.Errorf("%s: not a .npy file", path)
	}
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	if 10+hl > len(b) {
		return nil, nil, fmt.Errorf("%s: truncated header", path)
	}
	header := string(b[10 : 10+hl])
	if !strings.Contains(header, "'<f4'") || strings.Contains(header, "True") {
		return nil, nil, fmt.Errorf("%s: want C-ordered <f4, header %s", path, header)
	}
	open, end := strings.Index(header, "("), strings.Index(header, ")")
	if open < 0 || end < open {
		return nil, nil, fmt.Errorf("%s: no shape in %s", path, header)
	}
	var shape []int
	count := 1
	for _, f := range strings.Split(header[open+1:end], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var d int
		if _, err := fmt.Sscan(f, &d); err != nil {
			return nil, nil, fmt.Errorf("%s: shape %s: %w", path, header, err)
		}
		shape = append(shape, d)
		count *= d
	}
	body := b[10+hl:]
	if len(body) != 4*count {
		return nil, nil, fmt.Errorf("%s: %d bytes of data for shape %v", path, len(body), shape)
	}
	data := make([]float32, count)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return shape, data, nil
}
