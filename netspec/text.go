package netspec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Text writes m in protobuf's text format as Caffe's (C++) TextFormat
// prints it: fields in field-number order, one per line, nested messages
// indented by two spaces, enums by name, floats in their shortest form.
// Unlike Go's prototext, whose spacing is deliberately unstable between
// builds, the output is the same every time, so generated files can be
// committed and compared.
func Text(m proto.Message) string {
	var b strings.Builder
	writeMessage(&b, m.ProtoReflect(), 0)
	return b.String()
}

func writeMessage(b *strings.Builder, m protoreflect.Message, depth int) {
	// C++ prints by field number; Caffe's proto declares some fields out
	// of number order (LayerParameter's phase, propagate_down, ...).
	all := m.Descriptor().Fields()
	fields := make([]protoreflect.FieldDescriptor, all.Len())
	for i := range fields {
		fields[i] = all.Get(i)
	}
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	for _, fd := range fields {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			l := v.List()
			for j := range l.Len() {
				writeField(b, fd, l.Get(j), depth)
			}
			continue
		}
		writeField(b, fd, v, depth)
	}
}

func writeField(b *strings.Builder, fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) {
	indent := strings.Repeat("  ", depth)
	name := string(fd.Name())
	if fd.Kind() == protoreflect.GroupKind {
		name = string(fd.Message().Name())
	}
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		fmt.Fprintf(b, "%s%s {\n", indent, name)
		writeMessage(b, v.Message(), depth+1)
		fmt.Fprintf(b, "%s}\n", indent)
		return
	}
	fmt.Fprintf(b, "%s%s: %s\n", indent, name, scalar(fd, v))
}

func scalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return quote(v.String())
	case protoreflect.BytesKind:
		return quote(string(v.Bytes()))
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.FloatKind:
		return formatFloat(v.Float(), 32)
	case protoreflect.DoubleKind:
		return formatFloat(v.Float(), 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// formatFloat is the shortest decimal that reads back to the same value,
// as C++ TextFormat's SimpleFtoa/SimpleDtoa, with inf and nan spelled as
// the text format reads them.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// quote writes a string literal with C escapes, as C++ TextFormat does
// (bytes outside printable ASCII as octal).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '"':
			b.WriteString(`\"`)
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
