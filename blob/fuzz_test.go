package blob

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// FuzzBlobProto loads whatever bytes parse as a BlobProto (a .binaryproto
// mean file, one blob of a caffemodel) into blobs of both types, with and
// without reshaping: errors are fine, a panic or an allocation the proto's
// values do not back is not.
func FuzzBlobProto(f *testing.F) {
	for _, p := range []*caffepb.BlobProto{
		{Shape: &caffepb.BlobShape{Dim: []int64{2, 3}}, Data: []float32{1, 2, 3, 4, 5, 6}, Diff: []float32{6, 5, 4, 3, 2, 1}},
		{Num: proto.Int32(1), Channels: proto.Int32(2), Height: proto.Int32(1), Width: proto.Int32(2), DoubleData: []float64{1, 2, 3, 4}},
		{Shape: &caffepb.BlobShape{Dim: []int64{1 << 40}}},
		{Shape: &caffepb.BlobShape{}, Data: []float32{7}},
	} {
		b, err := proto.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p caffepb.BlobProto
		if proto.Unmarshal(b, &p) != nil {
			return
		}
		load[float32](t, &p)
		load[float64](t, &p)
	})
}

func load[T Float](t *testing.T, p *caffepb.BlobProto) {
	x, err := New[T](2, 3)
	if err != nil {
		t.Fatal(err)
	}
	before := x.ShapeString()
	if err := x.FromProto(p, false); err != nil && x.ShapeString() != before {
		t.Fatalf("a failed load changed the shape to %s", x.ShapeString())
	}
	if err := x.FromProto(p, true); err == nil {
		back := x.ToProto(true)
		if len(back.GetData()) != x.Count() && len(back.GetDoubleData()) != x.Count() {
			t.Fatalf("loaded %d values into a blob of %d", len(back.GetData()), x.Count())
		}
	}
}
