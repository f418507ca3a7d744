// Package fuzzguard keeps fuzzed protobuf messages within what a fuzz
// worker can afford: the fuzz targets build nets and solvers from whatever
// the fuzzer writes, and a net with a 1000x1000x1000 blob is a valid
// request for 4 GB, not a bug. Sizes beyond these bounds are covered by
// the hardening tests that check the limits themselves.
package fuzzguard

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxInt bounds every integer field of an affordable message (shape
// dimensions, num_output, batch sizes, iterations).
const MaxInt = 16

// MaxRepeated bounds the length of every repeated field.
const MaxRepeated = 8

// Affordable reports whether every integer in m lies within
// [-MaxInt, MaxInt] and every repeated field has at most MaxRepeated
// entries; with those bounds no blob or parameter of a net exceeds a few
// hundred thousand values, and one run of a fuzzed net or solver stays
// in the milliseconds.
func Affordable(m proto.Message) bool {
	return affordable(m.ProtoReflect())
}

func affordable(m protoreflect.Message) bool {
	ok := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			if l.Len() > MaxRepeated {
				ok = false
			}
			for i := 0; ok && i < l.Len(); i++ {
				ok = value(fd, l.Get(i))
			}
		case fd.IsMap():
			ok = false
		default:
			ok = value(fd, v)
		}
		return ok
	})
	return ok
}

func value(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return affordable(v.Message())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n := v.Int()
		return n >= -MaxInt && n <= MaxInt
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint() <= MaxInt
	}
	return true
}
