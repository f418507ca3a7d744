package protoio

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// TextOptions says how protobuf text (prototxt) is read.
type TextOptions struct {
	// SkipUnknownFields skips the fields the schema does not have, with one
	// warning each naming the field, its line and, where known, the Caffe
	// fork it comes from, instead of failing on the first. It is for files
	// of forks gocaffe has never seen; the layers that need those fields
	// will still be unknown types.
	SkipUnknownFields bool
	// Logger receives the warnings; nil is slog.Default().
	Logger *slog.Logger
}

// maxSkipped bounds how many unknown fields a file may have skipped.
const maxSkipped = 10000

// ReadFile parses the protobuf text file at path into m.
func (o TextOptions) ReadFile(path string, m proto.Message) error {
	b, err := fileio.ReadFile(path, fileio.ProtoLimit)
	if err != nil {
		return fmt.Errorf("protoio: %w", err)
	}
	if err := o.parse(path, b, m); err != nil {
		return fmt.Errorf("protoio: %s: %w", path, err)
	}
	return nil
}

// Parse parses protobuf text into m.
func (o TextOptions) Parse(text []byte, m proto.Message) error { return o.parse("", text, m) }

func (o TextOptions) parse(name string, text []byte, m proto.Message) error {
	if err := checkDecodeText(text, m); err != nil {
		return err
	}
	for skipped := 0; ; skipped++ {
		proto.Reset(m)
		err := prototext.Unmarshal(text, m)
		if err == nil {
			return nil
		}
		u, ok := asUnknownField(err)
		if !ok {
			return fmt.Errorf("parsing %s: %w", typeName(m), err)
		}
		if !o.SkipUnknownFields || skipped >= maxSkipped {
			return fmt.Errorf("parsing %s: line %d: %s (gocaffe -skip_unknown_fields, or protoio.TextOptions.SkipUnknownFields, skips such fields with a warning)",
				typeName(m), u.line, u.describe())
		}
		o.logger().Warn(fmt.Sprintf("%s line %d: skipping %s", orText(name), u.line, u.describe()))
		if text, err = blankField(text, u.line, u.col); err != nil {
			return fmt.Errorf("parsing %s: line %d: %s: %w", typeName(m), u.line, u.describe(), err)
		}
	}
}

func (o TextOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

func orText(name string) string {
	if name == "" {
		return "text"
	}
	return name
}

// unknownField is prototext's "unknown field" error, taken apart.
type unknownField struct {
	name      string
	line, col int
}

var unknownFieldRE = regexp.MustCompile(`\(line (\d+):(\d+)\): unknown field: (\w+)`)

func asUnknownField(err error) (unknownField, bool) {
	m := unknownFieldRE.FindStringSubmatch(err.Error())
	if m == nil {
		return unknownField{}, false
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	return unknownField{name: m[3], line: line, col: col}, true
}

// describe names the field and, where known, the fork it comes from.
func (u unknownField) describe() string {
	s := fmt.Sprintf("unknown field %q", u.name)
	if fork, ok := forkFields[u.name]; ok {
		s += ", from " + fork + ", whose layers gocaffe does not have"
	}
	return s
}

// forkFields names the Caffe forks that some fields gocaffe's schema does
// not hold come from (the forks it does hold are in proto/caffe.proto).
var forkFields = map[string]string{
	"region_param":               "the YOLO ports (the Region layer)",
	"reorg_param":                "the YOLO ports (the Reorg layer)",
	"psroi_pooling_param":        "R-FCN (the PSROIPooling layer)",
	"box_annotator_ohem_param":   "R-FCN (the BoxAnnotatorOHEM layer)",
	"shuffle_channel_param":      "the ShuffleNet ports (the ShuffleChannel layer)",
	"correlation_param":          "FlowNet's Caffe (the Correlation layer)",
	"margin_inner_product_param": "SphereFace (the MarginInnerProduct layer)",
	"center_loss_param":          "the center-loss face recognition Caffe (the CenterLoss layer)",
	"quantization_param":         "Ristretto or Intel Caffe (quantized layers)",
	"spatial_dropout_param":      "Intel Caffe (the SpatialDropout layer)",
	"multinode":                  "Intel Caffe (multinode training)",
}

// blankField replaces the field that starts at line:col (1-based, bytes)
// by spaces, newlines kept: its name, an optional colon and its value (a
// scalar, a quoted string, a list or a message in braces or angle
// brackets).
func blankField(text []byte, line, col int) ([]byte, error) {
	start := offset(text, line, col)
	if start < 0 {
		return nil, errors.New("the field's position is outside the text")
	}
	end, err := fieldEnd(text, start)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), text...)
	for i := start; i < end; i++ {
		if out[i] != '\n' {
			out[i] = ' '
		}
	}
	return out, nil
}

func offset(text []byte, line, col int) int {
	l, i := 1, 0
	for ; i < len(text) && l < line; i++ {
		if text[i] == '\n' {
			l++
		}
	}
	if l != line || i+col-1 > len(text) {
		return -1
	}
	return i + col - 1
}

// fieldEnd returns the offset just after the field starting at start.
func fieldEnd(text []byte, start int) (int, error) {
	i := start
	for i < len(text) && isNameByte(text[i]) {
		i++
	}
	i = skipSpace(text, i)
	if i < len(text) && text[i] == ':' {
		i = skipSpace(text, i+1)
	}
	if i >= len(text) {
		return 0, errors.New("the field has no value")
	}
	switch text[i] {
	case '{', '<', '[':
		return matching(text, i)
	case '"', '\'':
		return stringEnd(text, i)
	}
	j := i
	for j < len(text) && (isNameByte(text[j]) || text[j] == '-' || text[j] == '+' || text[j] == '.') {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("cannot read the value at %q", text[i:min(i+10, len(text))])
	}
	return j, nil
}

// matching returns the offset after the bracket that closes the one at i,
// skipping brackets inside strings and comments.
func matching(text []byte, i int) (int, error) {
	depth := 0
	for i < len(text) {
		switch c := text[i]; c {
		case '{', '<', '[':
			depth++
		case '}', '>', ']':
			if depth--; depth == 0 {
				return i + 1, nil
			}
		case '"', '\'':
			end, err := stringEnd(text, i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		}
		i++
	}
	return 0, errors.New("unbalanced brackets")
}

func stringEnd(text []byte, i int) (int, error) {
	quote := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case quote:
			return j + 1, nil
		case '\n':
			return 0, errors.New("unterminated string")
		}
	}
	return 0, errors.New("unterminated string")
}

func skipSpace(text []byte, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

func isNameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
