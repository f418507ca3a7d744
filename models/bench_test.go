package models_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// The LeNet benchmarks time one training iteration (forward, backward,
// update) at batch 64 and count its allocations: the training loop should
// make none. The same net is fed three ways: DummyData (random values,
// refilled every iteration), Input (the net as it is fed from Go, no data
// movement at all) and its real Data layers reading an LMDB database
// through the prefetcher. Data against Input is what prefetching costs the
// iteration.

// lenetBatch and lenetItem are LeNet's batch size and image shape.
const lenetBatch = 64

var lenetItem = []int{1, 28, 28}

func BenchmarkLeNetIteration(b *testing.B) {
	benchLeNet(b, solver.Options{}, nil, func(p *caffepb.NetParameter) { withDummyData(b, p, lenetItem, lenetBatch) })
}

func BenchmarkLeNetIterationInput(b *testing.B) {
	benchLeNet(b, solver.Options{}, nil, func(p *caffepb.NetParameter) { withInput(b, p, lenetItem, lenetBatch) })
}

func BenchmarkLeNetIterationData(b *testing.B) {
	benchLeNet(b, solver.Options{}, nil, func(p *caffepb.NetParameter) { withLMDB(b, p, 4096) })
}

// benchLeNet times LeNet training iterations with the given solver options,
// its data layers replaced by feed; sync, if not nil, waits for the device
// after each.
func benchLeNet(b *testing.B, opts solver.Options, sync func(), feed func(*caffepb.NetParameter)) {
	p := readNet(b, filepath.Join("lenet", "lenet_train_test.prototxt"))
	feed(p)
	sp := &caffepb.SolverParameter{NetParam: p, BaseLr: ptr[float32](0.01), Momentum: ptr[float32](0.9),
		WeightDecay: ptr[float32](0.0005), LrPolicy: ptr("inv"), Gamma: ptr[float32](0.0001), Power: ptr[float32](0.75),
		Display: ptr[int32](0), SnapshotAfterTrain: ptr(false), RandomSeed: ptr[int64](1)}
	s, err := solver.New[float32](sp, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Step(2); err != nil { // warm up: buffers reach their sizes
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Step(1); err != nil {
			b.Fatal(err)
		}
		if sync != nil {
			sync()
		}
	}
}

// withInput replaces the net's Data layers by Input layers with the same
// tops, shaped batch x item and batch.
func withInput(tb testing.TB, p *caffepb.NetParameter, item []int, batch int) {
	replaceDataLayers(tb, p, item, batch, func(l *caffepb.LayerParameter, data, label *caffepb.BlobShape) {
		l.Type, l.InputParam = ptr("Input"), &caffepb.InputParameter{Shape: []*caffepb.BlobShape{data, label}}
	})
}

// writeLMDB writes records 0..n-1 made by record into a new LMDB database
// under the keys %08d and returns its path.
func writeLMDB(tb testing.TB, name string, n int, record func(i int) proto.Message) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	db, err := data.Open(caffepb.DataParameter_LMDB, path, data.New)
	if err != nil {
		tb.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		v, err := proto.Marshal(record(i))
		if err != nil {
			tb.Fatal(err)
		}
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), v); err != nil {
			tb.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// withLMDB writes n random 28x28 grey datums with labels 0-9 into an LMDB
// database and points the net's Data layers at it (LMDB admits several
// readers of one environment).
func withLMDB(tb testing.TB, p *caffepb.NetParameter, n int) {
	tb.Helper()
	pix := make([]byte, 28*28)
	path := writeLMDB(tb, "lenet_lmdb", n, func(i int) proto.Message {
		for j := range pix {
			pix[j] = byte(i*7 + j*13)
		}
		return &caffepb.Datum{Channels: ptr[int32](1), Height: ptr[int32](28), Width: ptr[int32](28), Data: pix, Label: ptr(int32(i % 10))}
	})
	for _, l := range p.Layer {
		if l.GetType() == "Data" {
			l.DataParam.Source, l.DataParam.Backend = ptr(path), caffepb.DataParameter_LMDB.Enum()
		}
	}
}
