package caffepb_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestForkSchemas checks gocaffe's merged caffe.proto against the forks'
// own, compiled by protoc: GOCAFFE_FORK_PROTOS names them, as
// "ssd=/path/caffe.proto,nvcaffe=/path/caffe.proto,...";
// tools/forkprotos.sh writes them from the forks' repositories and prints
// the setting. (The forks' files are not copied into this repository.)
//
// For every message of a fork that gocaffe's schema has, every field must
// be in gocaffe's at the same number with the same name and type, or be
// one of the documented clashes (moved to another number, named in a
// comment of caffe.proto). Then caffemodels, solver parameters,
// solverstates and SSD's records are written with every field the fork
// and gocaffe share, through the fork's schema (protobuf's dynamic
// messages over protoc's descriptors), read with gocaffe's, written again
// and read back through the fork's: the two must be equal, with nothing
// left unknown.
func TestForkSchemas(t *testing.T) {
	spec := os.Getenv("GOCAFFE_FORK_PROTOS")
	if spec == "" {
		t.Skip("GOCAFFE_FORK_PROTOS is not set: run tools/forkprotos.sh for the forks' caffe.proto files")
	}
	for _, kv := range strings.Split(spec, ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("GOCAFFE_FORK_PROTOS entry %q: want name=path", kv)
		}
		t.Run(name, func(t *testing.T) { checkForkSchema(t, path) })
	}
}

func checkForkSchema(t *testing.T, path string) {
	fork := compileFork(t, path)
	ours := caffepb.File_caffe_proto
	clashes := map[string]bool{}
	var widened []string
	msgs := fork.fd.Messages()
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			walk(m.Messages())
			om := findMessage(ours, m.FullName())
			if om == nil {
				t.Errorf("message %s is not in gocaffe's schema", m.FullName())
				continue
			}
			for j := range m.Fields().Len() {
				f := m.Fields().Get(j)
				of := om.Fields().ByNumber(f.Number())
				switch {
				case of != nil && of.Name() == f.Name() && of.Kind() == f.Kind() && of.Cardinality() == f.Cardinality():
				case of != nil && of.Name() == f.Name() && of.Kind() == f.Kind() && !of.IsPacked() && !f.IsPacked():
					// optional in one, repeated (unpacked) in the other: the
					// same bytes on the wire for one value.
					widened = append(widened, fmt.Sprintf("%s.%s", m.Name(), f.Name()))
				case of != nil && of.Name() == f.Name():
					t.Errorf("%s.%s = %d: %v %v in the fork, %v %v in gocaffe", m.FullName(), f.Name(), f.Number(), f.Cardinality(), f.Kind(), of.Cardinality(), of.Kind())
				case om.Fields().ByName(f.Name()) != nil:
					// Moved: its number belongs to another field here, and
					// caffe.proto must say so next to the field.
					moved := om.Fields().ByName(f.Name()).Number()
					clashes[fmt.Sprintf("%s.%s %d->%d", m.Name(), f.Name(), f.Number(), moved)] = true
					if !documentedMove(t, m.Name(), f.Name(), f.Number(), moved) {
						t.Errorf("%s.%s: the fork numbers it %d, gocaffe %d, and caffe.proto does not say so (a comment \"... numbers it %d, taken here by ...\" above the field)",
							m.FullName(), f.Name(), f.Number(), moved, f.Number())
					}
				default:
					t.Errorf("%s.%s = %d is not in gocaffe's schema", m.FullName(), f.Name(), f.Number())
				}
			}
		}
	}
	walk(msgs)
	var moved []string
	for c := range clashes {
		moved = append(moved, c)
	}
	sort.Strings(moved)
	t.Logf("%d fields at another number in gocaffe (clashes with BVLC or an earlier fork): %s", len(moved), strings.Join(moved, ", "))
	t.Logf("%d fields optional in the fork and repeated in gocaffe (or the reverse; the same bytes for one value): %s", len(widened), strings.Join(widened, ", "))

	for _, name := range []protoreflect.FullName{"caffe.NetParameter", "caffe.SolverParameter", "caffe.SolverState", "caffe.Datum", "caffe.AnnotatedDatum", "caffe.BlobProto"} {
		md, err := fork.files.FindDescriptorByName(name)
		if err != nil {
			continue
		}
		roundTrip(t, md.(protoreflect.MessageDescriptor))
	}
}

// documentedMove reports whether caffe.proto's comment lines just above
// the field's declaration in message msg say "numbers it <forkNum>".
func documentedMove(t *testing.T, msg protoreflect.Name, field protoreflect.Name, forkNum, ourNum protoreflect.FieldNumber) bool {
	t.Helper()
	src, err := os.ReadFile("../caffe.proto")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	inMsg := false
	decl := regexp.MustCompile(fmt.Sprintf(`\b%s = %d\b`, field, ourNum))
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "message ") {
			inMsg = strings.Fields(l)[1] == string(msg)
		}
		if !inMsg || !decl.MatchString(l) {
			continue
		}
		for j := i - 1; j >= 0 && strings.HasPrefix(strings.TrimSpace(lines[j]), "//"); j-- {
			if strings.Contains(lines[j], fmt.Sprintf("numbers it %d", forkNum)) {
				return true
			}
		}
	}
	return false
}

// roundTrip writes a message with every shared field through the fork's
// schema and reads it with gocaffe's, and back.
func roundTrip(t *testing.T, md protoreflect.MessageDescriptor) {
	ours := findMessage(caffepb.File_caffe_proto, md.FullName())
	forkMsg := dynamicpb.NewMessage(md)
	n := populate(forkMsg, ours, 0)
	wire, err := proto.Marshal(forkMsg)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		t.Fatal(err)
	}
	got := mt.New().Interface()
	if err := proto.Unmarshal(wire, got); err != nil {
		t.Fatalf("%s: gocaffe cannot read the fork's bytes: %v", md.FullName(), err)
	}
	if u := unknownFields(got.ProtoReflect()); u != "" {
		t.Errorf("%s: gocaffe leaves fields of the fork's bytes unknown: %s", md.FullName(), u)
	}
	again, err := proto.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	back := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(again, back); err != nil {
		t.Fatalf("%s: the fork cannot read gocaffe's bytes: %v", md.FullName(), err)
	}
	if !proto.Equal(forkMsg, back) {
		t.Errorf("%s: the fork's message changed on the way through gocaffe", md.FullName())
	}
	t.Logf("%s: %d fields set, %d bytes, equal after the round trip through gocaffe", md.FullName(), n, len(wire))
}

// populate sets every field of m that gocaffe's message (ours) has at the
// same number and name, nested messages to depth 4, and returns how many
// it set. Values depend on the field number, so that a field read into
// another would show.
func populate(m *dynamicpb.Message, ours protoreflect.MessageDescriptor, depth int) int {
	set := 0
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		of := ours.Fields().ByNumber(f.Number())
		if of == nil || of.Name() != f.Name() {
			continue
		}
		if f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind {
			if depth >= 4 {
				continue
			}
			if f.IsList() {
				l := m.Mutable(f).List()
				for range 2 {
					e := dynamicpb.NewMessage(f.Message())
					set += populate(e, of.Message(), depth+1)
					l.Append(protoreflect.ValueOfMessage(e))
				}
			} else {
				set += populate(m.Mutable(f).Message().Interface().(*dynamicpb.Message), of.Message(), depth+1)
			}
			continue
		}
		v := scalar(f)
		if f.IsList() {
			l := m.Mutable(f).List()
			l.Append(v)
			l.Append(v)
		} else {
			m.Set(f, v)
		}
		set++
	}
	return set
}

func scalar(f protoreflect.FieldDescriptor) protoreflect.Value {
	n := int64(f.Number())
	switch f.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		vals := f.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(vals.Len() - 1).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(n + 7))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n + 7))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n + 7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n + 7))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n) + 0.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(n) + 0.25)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d", f.Name(), n))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{byte(n), 1, 2})
	}
	panic("unexpected kind " + f.Kind().String())
}

// unknownFields lists the unknown fields anywhere in m.
func unknownFields(m protoreflect.Message) string {
	var out []string
	if u := m.GetUnknown(); len(u) > 0 {
		out = append(out, fmt.Sprintf("%s (%d bytes)", m.Descriptor().FullName(), len(u)))
	}
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if f.Kind() != protoreflect.MessageKind {
			return true
		}
		if f.IsList() {
			for i := range v.List().Len() {
				if s := unknownFields(v.List().Get(i).Message()); s != "" {
					out = append(out, s)
				}
			}
		} else if s := unknownFields(v.Message()); s != "" {
			out = append(out, s)
		}
		return true
	})
	return strings.Join(out, "; ")
}

func findMessage(fd protoreflect.FileDescriptor, name protoreflect.FullName) protoreflect.MessageDescriptor {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil
	}
	md, _ := d.(protoreflect.MessageDescriptor)
	if md != nil && md.ParentFile() != fd {
		return nil
	}
	return md
}

// compileFork compiles a fork's caffe.proto with protoc into descriptors.
// forkSchema is a fork's compiled caffe.proto.
type forkSchema struct {
	fd    protoreflect.FileDescriptor
	files *protoregistry.Files
}

func compileFork(t *testing.T, path string) forkSchema {
	t.Helper()
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc is not installed")
	}
	out := filepath.Join(t.TempDir(), "fork.pb")
	cmd := exec.Command("protoc", "-I", filepath.Dir(path), "--include_imports", "--descriptor_set_out="+out, filepath.Base(path))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc %s: %v\n%s", path, err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(raw, set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := files.FindFileByPath(filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return forkSchema{fd: fd, files: files}
}
