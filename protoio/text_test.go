package protoio

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// forkNet uses fields of forks gocaffe's schema does not hold: a YOLO
// port's Region layer parameters, an unknown scalar, an unknown list and an
// unknown message holding a string with braces, inside known messages.
const forkNet = `name: "fork"
layer {
  name: "region"
  type: "Region"
  bottom: "x"
  top: "y"
  region_param { classes: 20 coords: 4 }
}
layer {
  name: "pool"
  type: "Pooling"
  pooling_param { pool: MAX kernel_size: 2 mystery: [1, 2, 3] stride: 2 }
  other { note: "a } in a string" nested < depth: -1.5e3 > }
  count: 7 # an unknown scalar with a comment
}
`

func TestUnknownFieldIsAnError(t *testing.T) {
	err := ParseText([]byte(forkNet), &caffepb.NetParameter{})
	if err == nil {
		t.Fatal("an unknown field parsed")
	}
	for _, want := range []string{"line 7", `"region_param"`, "the YOLO ports", "-skip_unknown_fields"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestSkipUnknownFields(t *testing.T) {
	var log bytes.Buffer
	p := &caffepb.NetParameter{}
	opts := TextOptions{SkipUnknownFields: true, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if err := opts.Parse([]byte(forkNet), p); err != nil {
		t.Fatal(err)
	}
	if len(p.Layer) != 2 || p.Layer[0].GetTop()[0] != "y" || p.Layer[1].GetPoolingParam().GetStride() != 2 ||
		p.Layer[1].GetPoolingParam().GetKernelSize() != 2 {
		t.Errorf("parsed %v", p)
	}
	warnings := strings.Count(log.String(), "level=WARN")
	if warnings != 4 {
		t.Errorf("%d warnings, want 4 (region_param, mystery, other, count):\n%s", warnings, log.String())
	}
	for _, want := range []string{"line 7", "region_param", "line 12", "mystery", "line 13", "other", "line 14", "count"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the warnings do not say %q:\n%s", want, log.String())
		}
	}
	// A syntax error is still an error.
	if err := opts.Parse([]byte(`layer { name: "x" `), &caffepb.NetParameter{}); err == nil {
		t.Error("an unterminated message parsed")
	}
}
