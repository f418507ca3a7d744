// Package protoio reads and writes Caffe's protobuf files: binary ones
// (.caffemodel, .solverstate, .binaryproto mean files) and text ones
// (.prototxt nets and solvers), as Caffe's util/io does.
//
// Errors name the file and the message type expected; text parse errors
// carry the line and column. Writes go to a temporary file in the same
// directory that is renamed over the target only once it is complete, so a
// crash or a full disk never leaves a half-written snapshot in place of the
// previous one.
package protoio

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// ReadProtoFromBinaryFile parses the binary protobuf file at path into m.
func ReadProtoFromBinaryFile(path string, m proto.Message) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("protoio: %w", err)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("protoio: %s is not a valid binary %s: %w", path, typeName(m), err)
	}
	return nil
}

// WriteProtoToBinaryFile writes m to path in the binary wire format, fields
// in number order as Caffe writes them.
func WriteProtoToBinaryFile(m proto.Message, path string) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("protoio: encoding %s for %s: %w", typeName(m), path, err)
	}
	return WriteFileAtomic(path, b)
}

// ReadProtoFromTextFile parses the protobuf text file (a .prototxt) at path
// into m. Unknown fields are errors, as in Caffe.
func ReadProtoFromTextFile(path string, m proto.Message) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("protoio: %w", err)
	}
	if err := ParseText(b, m); err != nil {
		return fmt.Errorf("protoio: %s: %w", path, err)
	}
	return nil
}

// ParseText parses protobuf text into m; the error says which message type
// was expected and where (line:column) the text went wrong.
func ParseText(text []byte, m proto.Message) error {
	if err := prototext.Unmarshal(text, m); err != nil {
		return fmt.Errorf("parsing %s: %w", typeName(m), err)
	}
	return nil
}

// WriteProtoToTextFile writes m to path in the protobuf text format.
func WriteProtoToTextFile(m proto.Message, path string) error {
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return fmt.Errorf("protoio: encoding %s for %s: %w", typeName(m), path, err)
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is synced and then renamed over path, so readers see either
// the old file or the complete new one.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	return nil
}

func typeName(m proto.Message) string {
	return string(m.ProtoReflect().Descriptor().FullName())
}
