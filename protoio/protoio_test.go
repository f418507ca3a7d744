package protoio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/filler"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// writeFilledBlob saves a gaussian-filled 2x3x4x5 blob (data and diff) and
// returns the file's path.
func writeFilledBlob(t *testing.T, dir string) string {
	t.Helper()
	b, err := blob.New[float32](2, 3, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	f, err := filler.New[float32](&caffepb.FillerParameter{Type: proto.String("gaussian")})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Fill(b, mathfn.NewRNG(3)); err != nil {
		t.Fatal(err)
	}
	mathfn.Scale(b.Count(), 2, b.CPUData(), b.MutableCPUDiff())
	path := filepath.Join(dir, "blob.binaryproto")
	if err := WriteProtoToBinaryFile(b.ToProto(true), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A BlobProto we wrote is byte-identical after being read and written again.
func TestBinaryRoundTripIsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	path := writeFilledBlob(t, dir)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p caffepb.BlobProto
	if err := ReadProtoFromBinaryFile(path, &p); err != nil {
		t.Fatal(err)
	}
	b, _ := blob.New[float32]()
	if err := b.FromProto(&p, true); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.binaryproto")
	if err := WriteProtoToBinaryFile(b.ToProto(true), again); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("rewritten file differs: %d bytes, then %d", len(first), len(second))
	}
	if b.ShapeString() != "2 3 4 5 (120)" {
		t.Errorf("read back shape %s", b.ShapeString())
	}
}

// loadBlob reads a BlobProto file into a blob, as a user loading a mean file
// or a snapshot would; every bad file must fail in one of the two steps.
func loadBlob(path string) error {
	var p caffepb.BlobProto
	if err := ReadProtoFromBinaryFile(path, &p); err != nil {
		return err
	}
	b, _ := blob.New[float32]()
	return b.FromProto(&p, true)
}

func TestBadBinaryFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(writeFilledBlob(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.binaryproto")
	os.WriteFile(garbage, []byte("this is not a protobuf \xff\xff\xff\xff"), 0o644)
	if err := loadBlob(garbage); err == nil || !strings.Contains(err.Error(), garbage) || !strings.Contains(err.Error(), "caffe.BlobProto") {
		t.Errorf("garbage file: err = %v, want one naming the file and caffe.BlobProto", err)
	}
	// Every truncation point must be caught, whether it cuts a field (a wire
	// error) or falls between fields (too few values for the shape).
	for cut := 1; cut < len(good); cut += 7 {
		path := filepath.Join(dir, "truncated.binaryproto")
		os.WriteFile(path, good[:cut], 0o644)
		if err := loadBlob(path); err == nil {
			t.Fatalf("file truncated to %d of %d bytes loaded without error", cut, len(good))
		}
	}
	missing := filepath.Join(dir, "missing.binaryproto")
	if err := loadBlob(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestTextFiles(t *testing.T) {
	dir := t.TempDir()
	net := &caffepb.NetParameter{Name: proto.String("tiny"), Layer: []*caffepb.LayerParameter{
		{Name: proto.String("ip"), Type: proto.String("InnerProduct"), InnerProductParam: &caffepb.InnerProductParameter{NumOutput: proto.Uint32(10)}},
	}}
	path := filepath.Join(dir, "net.prototxt")
	if err := WriteProtoToTextFile(net, path); err != nil {
		t.Fatal(err)
	}
	var back caffepb.NetParameter
	if err := ReadProtoFromTextFile(path, &back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(net, &back) {
		t.Errorf("text round trip changed the net: %v", &back)
	}
	bad := filepath.Join(dir, "bad.prototxt")
	os.WriteFile(bad, []byte("name: \"x\"\nlayer {\n  name: \"a\"\n  type: \"ReLU\"\n  bottom: \"data\" }\n}\n"), 0o644)
	err := ReadProtoFromTextFile(bad, &back)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 6:") || !strings.Contains(err.Error(), "caffe.NetParameter") {
		t.Errorf("syntax error: err = %v, want the file, caffe.NetParameter and line 6", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap.caffemodel")
	if err := WriteFileAtomic(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new contents")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new contents" {
		t.Errorf("file holds %q", got)
	}
	// A write that cannot complete (the target is a non-empty directory, so
	// the rename fails) leaves what was there and no temporary file.
	target := filepath.Join(dir, "occupied")
	os.MkdirAll(filepath.Join(target, "inner"), 0o755)
	if err := WriteFileAtomic(target, []byte("x")); err == nil || !strings.Contains(err.Error(), target) {
		t.Errorf("write over a directory: err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir", "f"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// TestWriteFileAtomicHonoursUmask: snapshots get mode 0666 less the umask,
// as Caffe's (an fopen'd file) do, not a fixed 0644.
func TestWriteFileAtomicHonoursUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o022, 0o644}, {0o002, 0o664}} {
		old := syscall.Umask(c.umask)
		path := filepath.Join(dir, "snap.caffemodel")
		err := WriteFileAtomic(path, []byte("x"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != c.want {
			t.Errorf("umask %04o: mode %04o, want %04o", c.umask, got, c.want)
		}
	}
}

// TestWriteFileAtomicRemovesStaleTemps: the temporary files of a process
// killed mid-snapshot are removed at the next write of the same file;
// those of a live process, and those of other files, are not.
func TestWriteFileAtomicRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	const deadPID = 1 << 30 // above any pid_max, so no such process
	touch := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("half a snapshot"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := touch(fmt.Sprintf(".snap.caffemodel.tmp-%d-12345", deadPID))
	live := touch(fmt.Sprintf(".snap.caffemodel.tmp-%d-12345", os.Getpid()))
	other := touch(fmt.Sprintf(".other.caffemodel.tmp-%d-12345", deadPID))
	oldStyle := touch(".snap.caffemodel.tmp-123456789")
	hourAgo := time.Now().Add(-2 * time.Hour)
	os.Chtimes(oldStyle, hourAgo, hourAgo)
	if err := WriteFileAtomic(filepath.Join(dir, "snap.caffemodel"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	for path, wantGone := range map[string]bool{dead: true, oldStyle: true, live: false, other: false} {
		_, err := os.Stat(path)
		if gone := os.IsNotExist(err); gone != wantGone {
			t.Errorf("%s: removed %v, want %v", filepath.Base(path), gone, wantGone)
		}
	}
}

// TestReadRefusesNonRegularFiles: /dev/zero as weights or a FIFO as a net
// is refused at once instead of exhausting memory or blocking.
func TestReadRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "net.prototxt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var net caffepb.NetParameter
	if err := ReadProtoFromBinaryFile("/dev/zero", &net); err == nil || !strings.Contains(err.Error(), "/dev/zero is not a regular file") {
		t.Errorf("/dev/zero: err = %v", err)
	}
	if err := ReadProtoFromTextFile(fifo, &net); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("FIFO: err = %v", err)
	}
}

// A message over 2 GiB - 1 bytes could never be read back, by Caffe or by
// ReadProtoFromBinaryFile: it is refused before anything is written, and a
// file already at the path stays. The net below is 2.4 GB on the wire but
// 4 MB in memory: its 600 layers are one LayerParameter.
func TestWriteBinaryOverTheLimit(t *testing.T) {
	layer := &caffepb.LayerParameter{Name: proto.String("ip"), Blobs: []*caffepb.BlobProto{{Data: make([]float32, 1<<20)}}}
	huge := &caffepb.NetParameter{Name: proto.String("huge")}
	for range 600 {
		huge.Layer = append(huge.Layer, layer)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.caffemodel")
	if err := os.WriteFile(path, []byte("the previous snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteProtoToBinaryFile(huge, path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "2 GiB - 1") || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("err = %v, want a refusal naming the file and the limit", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "the previous snapshot" {
		t.Errorf("the file at the path changed: %.40q", b)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
	if err := CheckBinarySize("caffe.NetParameter", path, BinaryLimit); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}
