package data

import (
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func marshal(t testing.TB, d *caffepb.Datum) []byte {
	t.Helper()
	b, err := proto.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkRecord(t *testing.T, what string, got DatumRecord, d *caffepb.Datum) {
	t.Helper()
	var want DatumRecord
	want.SetDatum(d)
	if got.Channels != want.Channels || got.Height != want.Height || got.Width != want.Width ||
		got.Label != want.Label || got.Encoded != want.Encoded ||
		!slices.Equal(got.Data, want.Data) || !slices.Equal(got.FloatData, want.FloatData) {
		t.Errorf("%s: parsed %+v, want %+v", what, got, want)
	}
}

// TestParseMatchesProto checks Parse against the protobuf runtime on
// datums of every kind, including a negative label (a 10-byte varint).
func TestParseMatchesProto(t *testing.T) {
	datums := map[string]*caffepb.Datum{
		"bytes":   {Channels: i32(2), Height: i32(1), Width: i32(3), Data: []byte{1, 2, 3, 4, 5, 255}, Label: i32(7)},
		"floats":  {Channels: i32(1), Height: i32(2), Width: i32(2), FloatData: []float32{0.5, -1, 3e7, float32(math.Inf(1))}, Label: i32(-3)},
		"encoded": {Data: []byte("\x89PNG..."), Encoded: proto.Bool(true), Label: i32(1)},
		"empty":   {},
	}
	var r DatumRecord
	for name, d := range datums {
		if err := r.Parse(marshal(t, d)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRecord(t, name, r, d)
	}
}

// TestParsePackedAndUnknown checks a packed float_data run (other writers
// than Caffe's may pack it), a repeated scalar (the last value wins) and an
// unknown field (skipped).
func TestParsePackedAndUnknown(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, datumChannels, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, datumChannels, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 99, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("ignored"))
	var packed []byte
	for _, v := range []float32{1.5, -2} {
		packed = protowire.AppendFixed32(packed, math.Float32bits(v))
	}
	b = protowire.AppendTag(b, datumFloatData, protowire.BytesType)
	b = protowire.AppendBytes(b, packed)
	b = protowire.AppendTag(b, datumFloatData, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, math.Float32bits(4))
	var r DatumRecord
	if err := r.Parse(b); err != nil {
		t.Fatal(err)
	}
	if r.Channels != 1 || !slices.Equal(r.FloatData, []float32{1.5, -2, 4}) {
		t.Errorf("parsed channels %d, float_data %v; want 1 and [1.5 -2 4]", r.Channels, r.FloatData)
	}
}

func TestParseMalformed(t *testing.T) {
	good := marshal(t, &caffepb.Datum{Channels: i32(1), Height: i32(1), Width: i32(4), Data: []byte{1, 2, 3, 4}})
	var r DatumRecord
	for _, bad := range [][]byte{good[:len(good)-2], {0xff}, {byte(datumFloatData<<3 | 2), 3, 0, 0, 0}} {
		err := r.Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "malformed Datum") {
			t.Errorf("Parse(%x) = %v, want a malformed Datum error", bad, err)
		}
	}
}

// TestParseAliasesAndDoesNotAllocate checks that the pixels are not copied
// and that parsing a raw record allocates nothing.
func TestParseAliasesAndDoesNotAllocate(t *testing.T) {
	rec := marshal(t, &caffepb.Datum{Channels: i32(1), Height: i32(28), Width: i32(28), Data: make([]byte, 784), Label: i32(3)})
	var r DatumRecord
	if err := r.Parse(rec); err != nil {
		t.Fatal(err)
	}
	r.Data[0] = 42
	if !slices.Contains(rec, 42) {
		t.Error("Data does not alias the record")
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.Parse(rec) }); n != 0 {
		t.Errorf("Parse allocates %v times per record, want 0", n)
	}
}

func TestDatumShapeErrors(t *testing.T) {
	cases := []struct {
		d    *caffepb.Datum
		want string
	}{
		{&caffepb.Datum{Channels: i32(1), Height: i32(0), Width: i32(2)}, "every dimension must be positive"},
		{&caffepb.Datum{Channels: i32(1), Height: i32(1), Width: i32(2), Data: []byte{1}}, "holds 1 bytes, want 2"},
		{&caffepb.Datum{Channels: i32(1), Height: i32(1), Width: i32(2), FloatData: []float32{1, 2, 3}}, "holds 3 float values, want 2"},
		{&caffepb.Datum{Encoded: proto.Bool(true)}, "decode it first"},
	}
	for _, c := range cases {
		_, _, _, err := DatumShape(c.d)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DatumShape(%v) = %v, want an error containing %q", c.d, err, c.want)
		}
	}
}

// TestParseAfterSetDatumLeavesDatumAlone: a record made a view of a Datum
// and then reused for parsing must not write into the Datum's arrays.
func TestParseAfterSetDatumLeavesDatumAlone(t *testing.T) {
	d := &caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(1), Width: proto.Int32(2),
		FloatData: make([]float32, 2, 8)}
	d.FloatData[0], d.FloatData[1] = 1, 2
	var r DatumRecord
	r.SetDatum(d)
	other, err := proto.Marshal(&caffepb.Datum{FloatData: []float32{7, 8, 9}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Parse(other); err != nil {
		t.Fatal(err)
	}
	if got := d.FloatData[:cap(d.FloatData)]; got[0] != 1 || got[1] != 2 || got[2] != 0 {
		t.Errorf("the Datum's float_data storage is now %v, want [1 2 0 ...]", got)
	}
	if len(r.FloatData) != 3 || r.FloatData[2] != 9 {
		t.Errorf("parsed float_data %v, want [7 8 9]", r.FloatData)
	}
}
