package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dotString quotes as DOT reads a quoted string: \ and " escaped, the
// record syntax { } | < > escaped in records only, a newline kept as
// Graphviz's line break and other control characters made spaces; Go's
// escapes (\t, \x01) are not DOT's.
func TestDotString(t *testing.T) {
	for _, c := range []struct {
		lines  []string
		record bool
		want   string
	}{
		{[]string{"conv1", "(Convolution)"}, true, `"conv1\n(Convolution)"`},
		{[]string{`a{b}|<c>`}, true, `"a\{b\}\|\<c\>"`},
		{[]string{`a{b}|<c>`}, false, `"a{b}|<c>"`},
		{[]string{`say "hi"`, `back\slash\`}, true, `"say \"hi\"\nback\\slash\\"`},
		{[]string{"tab\there\x01", "two\nlines"}, false, `"tab here \ntwo\nlines"`},
		{[]string{"ünï\x7fcödé"}, true, "\"ünï cödé\""},
	} {
		if got := dotString(c.lines, c.record); got != c.want {
			t.Errorf("dotString(%q, %v) = %s, want %s", c.lines, c.record, got, c.want)
		}
	}
}

// draw -o x.dot of a net whose names hold Graphviz's record syntax writes
// them escaped in the layers' record labels (Graphviz refused the file:
// "bad label format"), and as they are in the blobs' plain labels.
func TestDrawDotEscapesNames(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "odd.prototxt")
	text := `name: "odd \"net\""
layer { name: "in{put}" type: "Input" top: "x|y" input_param { shape { dim: 1 dim: 2 } } }
layer { name: "<ip>|{b}\\" type: "InnerProduct" bottom: "x|y" top: "z{}" inner_product_param { num_output: 2 } }`
	if err := os.WriteFile(model, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "odd.dot")
	if code, _, stderr := runCmd("draw", "-model", model, "-o", out); code != 0 {
		t.Fatalf("draw: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dot := string(b)
	for _, want := range []string{
		`digraph "odd \"net\"" {`,
		`shape=record, style=filled, fillcolor="#6495ed", label="in\{put\}\n(Input)"]`,
		`label="\<ip\>\|\{b\}\\\n(InnerProduct)\nout 2"]`,
		`shape=octagon, style=filled, fillcolor="#e6e6e6", label="x|y\n1 2 (2)"]`,
		`label="z{}\n1 2 (2)"]`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %s:\n%s", want, dot)
		}
	}
}
