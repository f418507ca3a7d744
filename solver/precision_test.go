package solver_test

import (
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// newSolver32 is newSolver for a float32 net, the type Caffe's files and
// NVCaffe's FLOAT raw_data hold.
func newSolver32(t *testing.T, extra string, opts solver.Options) *solver.Solver[float32] {
	t.Helper()
	return newSolver32Net(t, "", extra, opts)
}

// newSolver32Net is newSolver32 with fields added to the train net.
func newSolver32Net(t *testing.T, netFields, extra string, opts solver.Options) *solver.Solver[float32] {
	t.Helper()
	s, err := solver.New[float32](netParam(t, netFields, extra), opts)
	if err != nil {
		t.Fatal(err)
	}
	data, targets := s.Net().BlobByName("data"), s.Net().BlobByName("targets")
	mathfn.RngGaussian(data.Count(), 0, 1, data.MutableCPUData(), mathfn.NewRNG(1))
	mathfn.RngGaussian(targets.Count(), 0, 1, targets.MutableCPUData(), mathfn.NewRNG(2))
	return s
}

// netParam is solverParam with fields added to the train net.
func netParam(t *testing.T, netFields, extra string) *caffepb.SolverParameter {
	t.Helper()
	p := solverParam(t, extra+" snapshot_after_train: false")
	fields := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(netFields), fields); err != nil {
		t.Fatal(err)
	}
	proto.Merge(p.NetParam, fields)
	return p
}

// store_blobs_in_old_format: false writes NVCaffe's compact snapshots,
// raw_data of FLOAT for a float32 net, in the caffemodel and the
// solverstate alike; unset or true, BVLC's float fields, which BVLC Caffe
// reads. Both read back into the same weights and history.
func TestStoreBlobsInOldFormat(t *testing.T) {
	for _, c := range []struct {
		name, field string
		compact     bool
	}{{"unset", "", false}, {"true", "store_blobs_in_old_format: true", false}, {"false", "store_blobs_in_old_format: false", true}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			extra := `base_lr: 0.05 lr_policy: "fixed" momentum: 0.9 snapshot_prefix: "` + filepath.Join(dir, "ls") + `" ` + c.field
			a := newSolver32(t, extra, solver.Options{})
			if err := a.Step(2); err != nil {
				t.Fatal(err)
			}
			model, state, err := a.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			weights := &caffepb.NetParameter{}
			if err := protoio.ReadProtoFromBinaryFile(model, weights); err != nil {
				t.Fatal(err)
			}
			st := &caffepb.SolverState{}
			if err := protoio.ReadProtoFromBinaryFile(state, st); err != nil {
				t.Fatal(err)
			}
			var blobs []*caffepb.BlobProto
			for _, l := range weights.Layer {
				blobs = append(blobs, l.Blobs...)
			}
			if len(blobs) != 2 || len(st.History) != 2 {
				t.Fatalf("%d weight blobs and %d history blobs, want 2 and 2", len(blobs), len(st.History))
			}
			for _, b := range append(blobs, st.History...) {
				n := 1
				for _, d := range b.GetShape().GetDim() {
					n *= int(d)
				}
				if c.compact {
					if len(b.Data) != 0 || b.GetRawDataType() != caffepb.Type_FLOAT || len(b.RawData) != 4*n {
						t.Errorf("compact blob: %d float values, raw_data_type %v, %d raw bytes for %d values", len(b.Data), b.GetRawDataType(), len(b.RawData), n)
					}
				} else if len(b.Data) != n || b.RawData != nil || b.RawDataType != nil || len(b.DoubleData) != 0 {
					// Only the fields BVLC's schema has.
					t.Errorf("old-format blob: %d float values for %d, raw_data %d bytes, type %v", len(b.Data), n, len(b.RawData), b.RawDataType)
				}
			}
			// Resuming from either reads the same numbers back.
			b := newSolver32(t, extra, solver.Options{})
			if err := b.Restore(state); err != nil {
				t.Fatal(err)
			}
			if err := a.Step(2); err != nil {
				t.Fatal(err)
			}
			if err := b.Step(2); err != nil {
				t.Fatal(err)
			}
			for i, p := range a.Net().LearnableParams() {
				if got := b.Net().LearnableParams()[i].CPUData(); !slices.Equal(got, p.CPUData()) {
					t.Errorf("param %d: resumed %v, uninterrupted %v", i, got, p.CPUData())
				}
			}
		})
	}
}
