package golden

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the nets' and solvers' logs
	os.Exit(m.Run())
}

// The error of a value gocaffe computes against Caffe's is
// |go - caffe| / max(|caffe|, floorFraction * max|caffe|), the maximum
// taken over the blob compared: a value that cancels to nearly zero
// carries the absolute rounding error of the terms it was summed from, so
// it is measured against the blob's scale, not its own. Two float32
// computations that sum in different orders differ by their rounding
// errors; docs/testing.md gives the measurements behind these bounds (Caffe's
// own float32 results differ from float64 ones by up to 9e-6 on the layer
// nets and 6e-5 on the models, gocaffe's by 8e-6 and 1.2e-4; see
// TestFloat64Baseline).
const (
	floorFraction = 1e-2
	// layerTolerance bounds the error on the nets of one layer type.
	layerTolerance = 5e-5
	// modelTolerance bounds it on the whole models, where rounding
	// differences grow through up to 8 layers of sums of up to 9216 terms.
	modelTolerance = 5e-4
)

// models are the fixtures of whole models, held to modelTolerance.
var models = map[string]bool{"lenet": true, "cifar10_quick": true, "caffenet": true}

// TestGolden runs every fixture's net in gocaffe and compares every blob,
// gradient and parameter gradient with what BVLC Caffe computed.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.golden.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures testdata/*.golden.gz (%v): run tools/golden/regenerate.sh", err)
	}
	s := summary{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".golden.gz")
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name == "caffenet" {
				t.Skip("CaffeNet's 61 million parameters are skipped in -short mode")
			}
			c := &checker{t: t, fixture: name, summary: s, tolerance: layerTolerance}
			if models[name] {
				// Model errors are upstream errors grown: they would blur
				// the per-type figures, which come from the layer nets.
				c.tolerance, c.summary = modelTolerance, nil
			}
			c.run(path)
			t.Logf("%s: worst relative error %.3g (%s)", name, c.worst.err, c.worst.where)
		})
	}
	s.log(t)
}

// worst is the largest error seen, and where.
type worst struct {
	err   float64
	where string
}

func (w *worst) add(err float64, where string) {
	if err > w.err || w.where == "" {
		w.err, w.where = err, where
	}
}

// summary is the worst error per layer type: of the data it computes, of
// the bottom diffs it computes and of its parameter diffs.
type summary map[string]*[3]worst

const (
	ofData = iota
	ofDiff
	ofParamDiff
)

func (s summary) add(typ string, kind int, err float64, where string) {
	if s[typ] == nil {
		s[typ] = &[3]worst{}
	}
	s[typ][kind].add(err, where)
}

func (s summary) log(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "worst relative error per layer type (data | bottom diff | param diff):\n")
	types := slices.Sorted(func(yield func(string) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	})
	cell := func(w worst) string {
		if w.where == "" {
			return "-"
		}
		return fmt.Sprintf("%.2g (%s)", w.err, w.where)
	}
	for _, typ := range types {
		w := s[typ]
		fmt.Fprintf(&b, "  %-24s %s | %s | %s\n", typ, cell(w[ofData]), cell(w[ofDiff]), cell(w[ofParamDiff]))
	}
	t.Log(b.String())
}

// checker runs one fixture.
type checker struct {
	t         *testing.T
	fixture   string
	model     string  // the net's prototxt; "": testdata/nets/FIXTURE.prototxt
	summary   summary // nil: not summarised
	tolerance float64
	absFloor  float64 // the least scale an error is measured on (0: none)
	worst     worst
	fx        *fixture
	n         *net.Net[float32]

	producer, consumer map[string]string // blob name -> layer type
}

func (c *checker) run(path string) {
	t := c.t
	fx, err := readFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	c.fx = fx
	model := c.model
	if model == "" {
		model = filepath.Join("testdata", "nets", c.fixture+".prototxt")
	}
	// The comparison reads every blob: they keep their own memory.
	n, err := net.NewFromFile[float32](model, net.Options{
		State:         &caffepb.NetState{Phase: fx.phase.Enum()},
		Seed:          int64(fx.flags.seed),
		NoMemoryReuse: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	c.n = n
	c.checkLayers()
	if err := c.loadParams(); err != nil {
		t.Fatal(err)
	}
	if err := c.loadInputs(); err != nil {
		t.Fatal(err)
	}
	if err := n.ClearParamDiffs(); err != nil {
		t.Fatal(err)
	}
	loss, err := n.Forward()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Backward(); err != nil {
		t.Fatal(err)
	}
	c.record("loss", "", ofData, relErrFloor([]float32{loss}, []float32{float32(fx.loss)}, c.lossScale()))
	c.compareBlobs()
	c.compareParams()
	c.checkReuse(model)
}

// checkReuse runs the pass again in two new nets, one whose blobs keep
// their own memory and one whose blobs share memory (the plan's liveness
// pass), and fails unless the loss, the outputs and every parameter's data
// and diff are the same bit for bit.
func (c *checker) checkReuse(model string) {
	t, own := c.t, c.n
	defer func() { c.n = own }()
	pass := func(noReuse bool) (*net.Net[float32], float32) {
		n, err := net.NewFromFile[float32](model, net.Options{
			State:         &caffepb.NetState{Phase: c.fx.phase.Enum()},
			Seed:          int64(c.fx.flags.seed),
			NoMemoryReuse: noReuse,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		c.n = n
		if err := c.loadParams(); err != nil {
			t.Fatal(err)
		}
		if err := c.loadInputs(); err != nil {
			t.Fatal(err)
		}
		if err := n.ClearParamDiffs(); err != nil {
			t.Fatal(err)
		}
		loss, err := n.Forward()
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Backward(); err != nil {
			t.Fatal(err)
		}
		return n, loss
	}
	same := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	// differ lists what differs between two nets' passes.
	differ := func(n, want *net.Net[float32], loss, wantLoss float32) []string {
		var d []string
		if math.Float32bits(loss) != math.Float32bits(wantLoss) {
			d = append(d, fmt.Sprintf("loss %v, %v without", loss, wantLoss))
		}
		for i, b := range n.OutputBlobs() {
			if !same(b.CPUData(), want.OutputBlobs()[i].CPUData()) {
				d = append(d, "output "+n.OutputBlobNames()[i])
			}
		}
		wantParams := want.Params()
		for i, p := range n.Params() {
			if !same(p.CPUData(), wantParams[i].CPUData()) || !same(p.CPUDiff(), wantParams[i].CPUDiff()) {
				d = append(d, fmt.Sprintf("parameter %d (%s)", i, n.ParamDisplayNames()[i]))
			}
		}
		return d
	}
	want, wantLoss := pass(true)
	n, loss := pass(false)
	if d := differ(n, want, loss, wantLoss); len(d) > 0 {
		t.Errorf("with memory reuse: %s differ", strings.Join(d, ", "))
	}
}

// checkLayers fails unless gocaffe built the layers Caffe built (after
// filtering and split insertion), with the same names, types and blobs.
func (c *checker) checkLayers() {
	got := c.n.ToProto(false).GetLayer()
	describe := func(l *caffepb.LayerParameter) string {
		return fmt.Sprintf("%s (%s) %v -> %v", l.GetName(), l.GetType(), l.GetBottom(), l.GetTop())
	}
	var gs, ws []string
	for _, l := range got {
		gs = append(gs, describe(l))
	}
	for _, l := range c.fx.layers {
		ws = append(ws, describe(l))
	}
	if !slices.Equal(gs, ws) {
		c.t.Fatalf("gocaffe built other layers than Caffe:\n gocaffe: %s\n Caffe:   %s", strings.Join(gs, "; "), strings.Join(ws, "; "))
	}
	c.producer, c.consumer = map[string]string{}, map[string]string{}
	for _, l := range got {
		for _, b := range l.GetBottom() {
			if _, ok := c.consumer[b]; !ok {
				c.consumer[b] = l.GetType()
			}
		}
		for _, top := range l.GetTop() {
			c.producer[top] = l.GetType()
		}
	}
}

func paramName(layer string, j int) string { return fmt.Sprintf("%s[%d]", layer, j) }

// loadParams gives every layer Caffe's parameters: stored ones, or the
// seeded filler's.
func (c *checker) loadParams() error {
	layers := c.n.Layers()
	for i, lp := range c.fx.layers {
		blobs := layers[i].LayerBase().Blobs()
		if len(blobs) != len(lp.GetBlobs()) {
			return fmt.Errorf("layer %s: gocaffe has %d parameter blobs, Caffe %d", lp.GetName(), len(blobs), len(lp.GetBlobs()))
		}
		for j, p := range lp.GetBlobs() {
			b, name := blobs[j], paramName(lp.GetName(), j)
			if !b.ShapeEquals(p) {
				return fmt.Errorf("parameter %s: gocaffe's shape %s, Caffe's %v", name, b.ShapeString(), p.GetShape().GetDim())
			}
			if c.fx.flags.seeded {
				seededFill(c.fx.flags.seed, name, b)
				continue
			}
			if len(p.GetData()) != b.Count() {
				return fmt.Errorf("parameter %s: %d values stored for %d", name, len(p.GetData()), b.Count())
			}
			copy(b.MutableCPUData(), p.GetData())
		}
	}
	return nil
}

// loadInputs fills the Input layers' tops as Caffe's were.
func (c *checker) loadInputs() error {
	for i, l := range c.n.Layers() {
		if l.Type() != "Input" {
			continue
		}
		for _, top := range c.fx.layers[i].GetTop() {
			b := c.n.BlobByName(top)
			if c.fx.flags.seeded {
				if err := c.fx.flags.fillFor(top).fill(c.fx.flags.seed, top, b.MutableCPUData()); err != nil {
					return err
				}
				continue
			}
			p, ok := c.fx.blobs[top]
			if !ok || len(p.GetData()) != b.Count() {
				return fmt.Errorf("input %s is not stored whole in the fixture", top)
			}
			copy(b.MutableCPUData(), p.GetData())
		}
	}
	return nil
}

// compareBlobs compares every net blob's data and diff.
func (c *checker) compareBlobs() {
	if got, want := len(c.n.Blobs()), len(c.fx.blobs)+len(c.fx.blobSamples); got != want {
		c.t.Errorf("gocaffe's net has %d blobs, Caffe's %d", got, want)
	}
	for name, p := range c.fx.blobs {
		b := c.n.BlobByName(name)
		if b == nil {
			c.t.Errorf("Caffe's blob %s is missing from gocaffe's net", name)
			continue
		}
		if !b.ShapeEquals(p) {
			c.t.Errorf("blob %s: gocaffe's shape %s, Caffe's %v", name, b.ShapeString(), p.GetShape().GetDim())
			continue
		}
		c.compareBlob(name, b, nil, p)
	}
	for name, p := range c.fx.blobSamples {
		b := c.n.BlobByName(name)
		if b == nil {
			c.t.Errorf("Caffe's blob %s is missing from gocaffe's net", name)
			continue
		}
		c.compareBlob(name, b, sampleIndices(c.fx.flags.seed, name, b.Count(), len(p.GetData())), p)
	}
}

func (c *checker) compareBlob(name string, b *blob.Blob[float32], idx []int, p *caffepb.BlobProto) {
	data := c.relErr(gather(b.CPUData(), idx), p.GetData())
	if terms, ok := c.probeTerms(name); ok {
		data = relErrFloor(b.CPUData(), p.GetData(), terms)
	}
	c.record("blob "+name+" data", c.producer[name], ofData, data)
	typ := c.consumer[name]
	if typ == "" { // a net output: its diff is the loss weight the net wrote
		typ = c.producer[name]
	}
	c.record("blob "+name+" diff", typ, ofDiff, c.relErr(gather(b.CPUDiff(), idx), p.GetDiff()))
}

// compareParams compares every parameter's diff, and its data where Caffe
// stored it (Forward changes only BatchNorm's statistics).
func (c *checker) compareParams() {
	layers := c.n.Layers()
	seed := c.fx.flags.seed
	for i, lp := range c.fx.layers {
		blobs := layers[i].LayerBase().Blobs()
		for j, p := range lp.GetBlobs() {
			b, name := blobs[j], paramName(lp.GetName(), j)
			if s, ok := c.fx.paramSamples[name]; ok {
				idx := sampleIndices(seed, name, b.Count(), len(s.GetData()))
				c.record("param "+name+" diff", lp.GetType(), ofParamDiff, c.relErr(gather(b.CPUDiff(), idx), s.GetDiff()))
				if _, ok := c.fx.updated[name]; !ok {
					c.record("param "+name+" data", lp.GetType(), ofData, c.relErr(gather(b.CPUData(), idx), s.GetData()))
				}
			} else {
				c.record("param "+name+" diff", lp.GetType(), ofParamDiff, c.relErr(b.CPUDiff(), p.GetDiff()))
			}
			if u, ok := c.fx.updated[name]; ok {
				c.record("param "+name+" data after Forward", lp.GetType(), ofData, c.relErr(b.CPUData(), u.GetData()))
			}
		}
	}
}

// record notes one comparison and fails the test above the tolerance.
func (c *checker) record(what, typ string, kind int, e elemErr) {
	if e.err > c.tolerance || e.at < 0 {
		c.t.Errorf("%s: relative error %.3g at %d (gocaffe %v, Caffe %v)%s", what, e.err, e.at, e.got, e.want, e.note)
	}
	c.worst.add(e.err, what)
	if typ != "" && c.summary != nil {
		c.summary.add(typ, kind, e.err, c.fixture+": "+what)
	}
}

// elemErr is the worst element of a comparison.
type elemErr struct {
	err       float64
	at        int
	got, want float32
	note      string
}

// lossScale is the sum of the magnitudes of the terms of the net's loss:
// the loss, a sum that can cancel, is measured against it.
func (c *checker) lossScale() float64 {
	s := 0.0
	names := c.n.OutputBlobNames()
	for j, b := range c.n.OutputBlobs() {
		w := math.Abs(float64(c.n.OutputLossWeight(j)))
		if terms, ok := c.probeTerms(names[j]); ok {
			s += w * terms
			continue
		}
		for _, v := range b.CPUData() {
			s += w * math.Abs(float64(v))
		}
	}
	return s
}

// probeTerms is the sum of the magnitudes of the terms of a probe's
// output (README.md): sum |w_i x_i| + |b|, what its rounding error is
// measured on (the output itself can cancel to near zero). ok is false for
// a blob no probe writes.
func (c *checker) probeTerms(top string) (float64, bool) {
	for _, l := range c.n.Layers() {
		lp := l.LayerBase().Param()
		if l.Type() != "InnerProduct" || !strings.HasPrefix(lp.GetName(), "probe_") || len(lp.GetTop()) != 1 || lp.GetTop()[0] != top {
			continue
		}
		params := l.LayerBase().Blobs()
		x := c.n.BlobByName(lp.GetBottom()[0]).CPUData()
		w := params[0].CPUData()
		if len(w) != len(x) {
			return 0, false
		}
		s := 0.0
		for i := range x {
			s += math.Abs(float64(w[i]) * float64(x[i]))
		}
		if len(params) > 1 {
			s += math.Abs(float64(params[1].CPUData()[0]))
		}
		return s, true
	}
	return 0, false
}

// relErr compares got with want element by element, as |got - want| /
// max(|want|, floorFraction * max|want|).
func relErr(got, want []float32) elemErr { return relErrAtLeast(got, want, 0) }

// relErr is relErr with the checker's absFloor.
func (c *checker) relErr(got, want []float32) elemErr { return relErrAtLeast(got, want, c.absFloor) }

// relErrAtLeast is relErr measured on a scale of at least least: the
// floor is max(floorFraction * max|want|, least).
func relErrAtLeast(got, want []float32, least float64) elemErr {
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	return relErrFloor(got, want, max(floorFraction*scale, least))
}

// relErrFloor is |got - want| / max(|want|, floor), element by element.
func relErrFloor(got, want []float32, floor float64) elemErr {
	if len(got) != len(want) {
		return elemErr{err: math.Inf(1), at: -1, note: fmt.Sprintf(": %d values against %d", len(got), len(want))}
	}
	floor = max(floor, math.SmallestNonzeroFloat32)
	e := elemErr{}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		d := math.Abs(g-w) / max(math.Abs(w), floor)
		switch {
		case math.IsNaN(g) && math.IsNaN(w):
			d = 0
		case math.IsNaN(d):
			d = math.Inf(1)
		}
		if d > e.err || i == 0 {
			e = elemErr{err: d, at: i, got: got[i], want: want[i]}
		}
	}
	if len(want) == 0 {
		e.at = 0
	}
	return e
}

// gather returns v at idx, or v itself for nil idx.
func gather[T any](v []T, idx []int) []T {
	if idx == nil {
		return v
	}
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = v[i]
	}
	return out
}
