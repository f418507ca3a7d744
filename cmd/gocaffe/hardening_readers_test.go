package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/lmdb"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestReadersBoundSizesThroughTheCommand: files whose sizes lie, and nets
// that ask for more memory than there is, through gocaffe under the
// address-space limit: exit 1 with a message naming the file or layer,
// never a stack trace, an out-of-memory death or a walk without end.
func TestReadersBoundSizesThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	solverFor := func(name, net, extra string) string {
		netPath := write(name+".prototxt", []byte(net))
		return write(name+"_solver.prototxt", fmt.Appendf(nil, "net: %q base_lr: 0.1 lr_policy: \"fixed\" max_iter: 2 snapshot_prefix: %q %s", netPath, filepath.Join(dir, name), extra))
	}
	// hdf5Train trains a net whose HDF5Data layer reads the file.
	hdf5Train := func(name string, file []byte) []string {
		list := write(name+"_list.txt", []byte(write(name+".h5", file)+"\n"))
		net := fmt.Sprintf(`layer { name: "h5" type: "HDF5Data" top: "data" top: "label" hdf5_data_param { source: %q batch_size: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "y" inner_product_param { num_output: 2 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }`, list)
		return []string{"train", "-solver", solverFor(name, net, "")}
	}
	label := badinput.H5Dataset{Path: "label", Shape: []uint64{10}, Stored: make([]byte, 40)}
	good := writeSolver(t, dir, "teacher", "max_iter: 2")
	linkBomb := write("link.h5", badinput.HDF5LinkNameBomb())
	linkState := write("link.solverstate.h5", badinput.HDF5LinkNameBomb())
	// The teacher net's student InnerProduct has weights of 3x8.
	weightsBomb := write("bomb_weights.h5", badinput.HDF5(badinput.H5Dataset{Path: "data/student/0", Shape: []uint64{3, 8}, Deflated: badinput.DeflateBomb(3 << 30)}))
	emptyLayers := write("layers.caffemodel", badinput.EmptyLayers(10_000_000))
	input := func(name, shape string) string {
		return write(name+".prototxt", fmt.Appendf(nil, `layer { name: "in" type: "Input" top: "x" input_param { shape { %s } } }`, shape))
	}
	im2col := write("im2col.prototxt", []byte(`layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }
layer { name: "i2c" type: "Im2col" bottom: "x" top: "y" convolution_param { kernel_size: 3 pad: 1000 } }`))
	priorBox := write("priorbox.prototxt", []byte(`layer { name: "map" type: "Input" top: "x" input_param { shape { dim: 1 dim: 1 dim: 4000 dim: 4000 } } }
layer { name: "img" type: "Input" top: "im" input_param { shape { dim: 1 dim: 3 dim: 300 dim: 300 } } }
layer { name: "pb" type: "PriorBox" bottom: "x" bottom: "im" top: "p" prior_box_param { min_size: 30 aspect_ratio: 2 flip: true } }`))

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"HDF5 link name of 2^62 bytes as -weights", []string{"train", "-solver", good, "-weights", linkBomb},
			[]string{linkBomb, "link name of 4611686018427387904 bytes"}},
		{"HDF5 link name of 2^62 bytes as -snapshot", []string{"train", "-solver", good, "-snapshot", linkState},
			[]string{linkState, "link name of 4611686018427387904 bytes"}},
		{"HDF5 link name of 2^62 bytes in HDF5Data", hdf5Train("link_data", badinput.HDF5LinkNameBomb()),
			[]string{`layer "h5" (HDF5Data)`, "link_data.h5", "link name of"}},
		{"HDF5 compact dataset claiming 4 GiB", hdf5Train("compact", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1 << 30}, Compact: make([]byte, 16)}, label)),
			[]string{`layer "h5" (HDF5Data)`, "compact.h5: dataset /data: compact data of 16 bytes"}},
		{"HDF5 deflate chunk inflating to 3 GiB", hdf5Train("inflate", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{10, 10}, Deflated: badinput.DeflateBomb(3 << 30)}, label)),
			[]string{`layer "h5" (HDF5Data)`, "inflate.h5: dataset /data: chunk at [0 0]", "inflates to more than the 404 bytes"}},
		{"HDF5 deflate chunk inflating to 3 GiB as -weights", []string{"train", "-solver", good, "-weights", weightsBomb},
			[]string{weightsBomb, "dataset /data/student/0", "inflates to more than"}},
		{"HDF5 dataspace of 2^31-1 rows with 4242 stored", hdf5Train("rows", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1<<31 - 1, 1}, Stored: make([]byte, 4*4242)}, label)),
			[]string{`layer "h5" (HDF5Data)`, "rows.h5: dataset /data", "run past the end of the file"}},
		{"HDF5 never-written dataset of 1e9 elements", hdf5Train("never", badinput.HDF5(badinput.H5Dataset{Path: "data", Shape: []uint64{1e9}}, label)),
			[]string{`layer "h5" (HDF5Data)`, "never.h5: dataset /data", "blob: shape [1000000000] needs 3.7 GiB, but only"}},
		{"caffemodel of 10 million empty layers as -weights", []string{"train", "-solver", good, "-weights", emptyLayers},
			[]string{emptyLayers, "decoding it as a caffe.NetParameter of 10000001 messages needs"}},
		{"caffemodel of 10 million empty layers upgraded", []string{"upgrade_net_proto_binary", emptyLayers, filepath.Join(dir, "upgraded.caffemodel")},
			[]string{emptyLayers, "decoding it as a caffe.NetParameter of 10000001 messages needs"}},
		{"prototxt of 2 million empty layers", []string{"time", "-model", write("layers.prototxt", []byte(strings.Repeat("layer {}\n", 2_000_000)))},
			[]string{"layers.prototxt", "decoding it as a caffe.NetParameter of 2000000 messages needs"}},
		{"an 8 GiB Input", []string{"time", "-model", input("input8g", "dim: 2 dim: 1024 dim: 1024 dim: 1023"), "-iterations", "1"},
			[]string{`layer "in" (Input)`, "blob: shape [2 1024 1024 1023] needs 8.0 GiB, but only"}},
		{"Im2col with pad 1000", []string{"time", "-model", im2col, "-iterations", "1"},
			[]string{`layer "i2c" (Im2col)`, "blob: shape [", "but only"}},
		{"PriorBox on a 4000x4000 map", []string{"time", "-model", priorBox, "-iterations", "1"},
			[]string{`layer "pb" (PriorBox)`, "blob: shape [", "but only"}},
	}
	for _, c := range cases {
		code, log := gocaffeLimited(t, c.args...)
		t.Logf("%s: %s", c.name, lastLines(log, 1))
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
	if _, err := os.Stat(filepath.Join(dir, "upgraded.caffemodel")); !os.IsNotExist(err) {
		t.Errorf("upgrade_net_proto_binary refused its input but wrote an output (%v)", err)
	}
}

// writeSmallDatums writes n 1x4x4 Datum records to a new database.
func writeSmallDatums(t *testing.T, backend caffepb.DataParameter_DB, dir string, n int) {
	t.Helper()
	db, err := data.Open(backend, dir, data.New)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d := &caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(4), Width: proto.Int32(4), Data: make([]byte, 16), Label: proto.Int32(int32(i % 2))}
		d.Data[i%16] = byte(i)
		b, _ := proto.Marshal(d)
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), b); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 { // LevelDB: a journal record per thousand
			if err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptDatabasesThroughTheCommand: an LMDB whose branch pages share
// children, and a LevelDB with one flipped bit in its journal, are errors
// naming the database in compute_image_mean and in the Data layer; before,
// the first walked one leaf's records without end and the second read half
// the records and exited 0.
func TestCorruptDatabasesThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	dag := filepath.Join(dir, "dag_lmdb")
	writeSmallDatums(t, caffepb.DataParameter_LMDB, dag, 3000)
	dataFile := filepath.Join(dag, "data.mdb")
	b, err := os.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dataFile, badinput.LMDBShareChildren(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := lmdb.OpenReader(dag); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
	flipped := filepath.Join(dir, "flipped_leveldb")
	writeSmallDatums(t, caffepb.DataParameter_LEVELDB, flipped, 2000)
	if err := badinput.FlipJournalBit(flipped); err != nil {
		t.Fatal(err)
	}
	trainOn := func(name, source, backend string) []string {
		net := fmt.Sprintf(`layer { name: "data" type: "Data" top: "x" top: "label" data_param { source: %q backend: %s batch_size: 16 } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }`, source, backend)
		netPath := filepath.Join(dir, name+".prototxt")
		os.WriteFile(netPath, []byte(net), 0o644)
		solver := filepath.Join(dir, name+"_solver.prototxt")
		os.WriteFile(solver, fmt.Appendf(nil, "net: %q base_lr: 0.01 lr_policy: \"fixed\" max_iter: 400 snapshot_prefix: %q", netPath, filepath.Join(dir, name)), 0o644)
		return []string{"train", "-solver", solver}
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"compute_image_mean, LMDB DAG", []string{"compute_image_mean", dag, filepath.Join(dir, "dag_mean.binaryproto")},
			[]string{dataFile, "reached a second time"}},
		{"Data layer, LMDB DAG", trainOn("dag", dag, "LMDB"),
			[]string{dataFile, "reached a second time"}},
		{"compute_image_mean, LevelDB flipped bit", []string{"compute_image_mean", "-backend", "leveldb", flipped, filepath.Join(dir, "flipped_mean.binaryproto")},
			[]string{flipped, "corrupted"}},
		{"Data layer, LevelDB flipped bit", trainOn("flipped", flipped, "LEVELDB"),
			[]string{`layer "data" (Data)`, flipped, "corrupted"}},
	} {
		code, log := gocaffeLimited(t, c.args...)
		t.Logf("%s: %s", c.name, lastLines(log, 1))
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
	for _, mean := range []string{"dag_mean.binaryproto", "flipped_mean.binaryproto"} {
		if _, err := os.Stat(filepath.Join(dir, mean)); !os.IsNotExist(err) {
			t.Errorf("%s written from a corrupt database (%v)", mean, err)
		}
	}
}

// TestDrawBoundsItsCanvas: a layer named with a megabyte of text is drawn
// with its name clipped; a PNG too large to allocate is refused, naming
// the way out.
func TestDrawBoundsItsCanvas(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.prototxt")
	os.WriteFile(long, fmt.Appendf(nil, `layer { name: "%s" type: "Input" top: "x" input_param { shape { dim: 1 } } }`, strings.Repeat("n", 1<<20)), 0o644)
	png := filepath.Join(dir, "long.png")
	if code, log := gocaffeLimited(t, "draw", "-model", long, "-o", png); code != 0 {
		t.Fatalf("draw of a long name: exit %d:\n%s", code, lastLines(log, 8))
	}
	if st, err := os.Stat(png); err != nil || st.Size() > 1<<20 {
		t.Errorf("picture of a long name: %v, %v", st, err)
	}
	var wide strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&wide, "layer { name: \"in%d\" type: \"Input\" top: \"x%d\" input_param { shape { dim: 1 } } }\n", i, i)
	}
	widePath := filepath.Join(dir, "wide.prototxt")
	os.WriteFile(widePath, []byte(wide.String()), 0o644)
	code, log := gocaffeLimited(t, "draw", "-model", widePath, "-o", filepath.Join(dir, "wide.png"))
	if code != 1 || !strings.Contains(log, "wide.png: the picture would be") || !strings.Contains(log, "write .svg or .dot instead") {
		t.Errorf("draw of 5000 layers side by side: exit %d:\n%s", code, lastLines(log, 8))
	}
	if code, log := gocaffeLimited(t, "draw", "-model", widePath, "-o", filepath.Join(dir, "wide.svg")); code != 0 {
		t.Errorf("the same as SVG: exit %d:\n%s", code, lastLines(log, 8))
	}
}
