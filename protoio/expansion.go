package protoio

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/gocaffe/gocaffe/internal/sysmem"
)

// Decoding a protobuf file can take far more memory than the file: an
// empty `layer {}` is 2 bytes on the wire and an 840-byte LayerParameter
// in Go, so a 30 MB caffemodel of empty layers asks for 8 GB. The readers
// estimate what decoding will take, with a pass over the bytes that
// allocates nothing, and refuse what the process cannot have before
// proto.Unmarshal or prototext.Unmarshal finds out by dying.

// maxNesting bounds the estimate's recursion, as protobuf's own decoder
// bounds its own (Caffe's schema nests a few levels).
const maxNesting = 100

// checkDecodeBinary refuses b when decoding it as m would take more memory
// than the process can have; the error names no file (the caller does).
func checkDecodeBinary(b []byte, m proto.Message) error {
	var e estimate
	if err := e.message(b, m.ProtoReflect().Descriptor(), 0); err != nil {
		return nil // malformed: proto.Unmarshal says what is wrong
	}
	return e.check(m)
}

// checkDecodeText is checkDecodeBinary for protobuf text: every message
// opened in it ('{' or '<' outside strings and comments) is counted at the
// size of the largest message m's schema can hold there.
func checkDecodeText(text []byte, m proto.Message) error {
	e := estimate{messages: openings(text)}
	e.bytes = e.messages*largestMessage(m.ProtoReflect().Descriptor()) + uint64(len(text))
	return e.check(m)
}

// estimate is what decoding will allocate, roughly: the Go structs of the
// messages, the slices of repeated fields (counted twice, for append's
// growth), strings and unknown fields.
type estimate struct {
	bytes    uint64
	messages uint64
}

func (e *estimate) check(m proto.Message) error {
	return sysmem.Check(e.bytes, fmt.Sprintf("decoding it as a %s of %d messages", typeName(m), e.messages))
}

// message adds one message of type md encoded in b.
func (e *estimate) message(b []byte, md protoreflect.MessageDescriptor, depth int) error {
	if depth > maxNesting {
		return errors.New("nested too deeply")
	}
	e.messages++
	e.bytes += structSize(md)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		vn := protowire.ConsumeFieldValue(num, typ, b)
		if vn < 0 {
			return protowire.ParseError(vn)
		}
		if err := e.field(b[:vn], typ, md.Fields().ByNumber(num), depth); err != nil {
			return err
		}
		b = b[vn:]
	}
	return nil
}

// field adds one field's value v (its wire form, after the tag).
func (e *estimate) field(v []byte, typ protowire.Type, fd protoreflect.FieldDescriptor, depth int) error {
	slot := uint64(8) // a pointer, or a slice element, in the parent
	if fd != nil && fd.IsList() {
		slot *= 2 // append's spare capacity
	}
	switch {
	case fd == nil: // an unknown field: kept as its bytes
		e.bytes += uint64(len(v)) + 8
	case typ == protowire.BytesType && (fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind):
		inner, _ := protowire.ConsumeBytes(v)
		e.bytes += slot
		return e.message(inner, fd.Message(), depth+1)
	case typ == protowire.BytesType && fd.IsList() && fd.Kind() != protoreflect.StringKind && fd.Kind() != protoreflect.BytesKind:
		inner, _ := protowire.ConsumeBytes(v)
		e.bytes += packedCount(inner, fd.Kind()) * scalarSize(fd.Kind()) * 2
	case typ == protowire.BytesType: // a string or bytes: its header and bytes
		e.bytes += slot + 16 + uint64(len(v))
	default: // a scalar: a pointer to it (proto2), or a slice element
		e.bytes += slot + scalarSize(fd.Kind())
	}
	return nil
}

// packedCount is the number of elements of a packed repeated field.
func packedCount(b []byte, k protoreflect.Kind) uint64 {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return uint64(len(b)) / 4
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return uint64(len(b)) / 8
	}
	var n uint64 // varints: one ends at every byte without the high bit
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// scalarSize is the size of a scalar in Go.
func scalarSize(k protoreflect.Kind) uint64 {
	switch k {
	case protoreflect.BoolKind:
		return 1
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind,
		protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return 8
	}
	return 4
}

var structSizes sync.Map // protoreflect.FullName -> uint64

// structSize is the size of the Go struct of messages of type md, or a
// guess from its fields for a type with no Go struct registered.
func structSize(md protoreflect.MessageDescriptor) uint64 {
	if v, ok := structSizes.Load(md.FullName()); ok {
		return v.(uint64)
	}
	size := 64 + 8*uint64(md.Fields().Len())
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		if t := reflect.TypeOf(mt.Zero().Interface()); t.Kind() == reflect.Pointer {
			size = uint64(t.Elem().Size())
		}
	}
	structSizes.Store(md.FullName(), size)
	return size
}

// largestMessage is the size of the largest struct among md and the
// messages it can hold.
func largestMessage(md protoreflect.MessageDescriptor) uint64 {
	seen := map[protoreflect.FullName]bool{}
	var walk func(protoreflect.MessageDescriptor) uint64
	walk = func(md protoreflect.MessageDescriptor) uint64 {
		if seen[md.FullName()] {
			return 0
		}
		seen[md.FullName()] = true
		largest := structSize(md)
		fields := md.Fields()
		for i := range fields.Len() {
			if sub := fields.Get(i).Message(); sub != nil {
				largest = max(largest, walk(sub))
			}
		}
		return largest
	}
	return walk(md)
}

// openings counts the messages opened in protobuf text: '{' and '<'
// outside strings and comments.
func openings(text []byte) uint64 {
	var n uint64
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '{', '<':
			n++
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case '"', '\'':
			for i++; i < len(text) && text[i] != c && text[i] != '\n'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		}
	}
	return n
}
