package main

import (
	"bytes"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

const testLabelMap = `item { name: "none_of_the_above" label: 0 display_name: "background" }
item { name: "cat" label: 1 display_name: "cat" }
item { name: "dog" label: 2 display_name: "dog" }
`

func vocFile(w, h int, objects ...string) []byte {
	return fmt.Appendf(nil, "<annotation><size><width>%d</width><height>%d</height><depth>3</depth></size>%s</annotation>", w, h, strings.Join(objects, ""))
}

func vocObject(name string, difficult int, x0, y0, x1, y1 int) string {
	return fmt.Sprintf("<object><name>%s</name><difficult>%d</difficult><bndbox><xmin>%d</xmin><ymin>%d</ymin><xmax>%d</xmax><ymax>%d</ymax></bndbox></object>", name, difficult, x0, y0, x1, y1)
}

func readAnnotated(t *testing.T, backend caffepb.DataParameter_DB, path string) ([]string, []*caffepb.AnnotatedDatum) {
	t.Helper()
	var keys []string
	var recs []*caffepb.AnnotatedDatum
	for _, kv := range readDBValues(t, backend, path) {
		r := &caffepb.AnnotatedDatum{}
		if err := proto.Unmarshal(kv[1], r); err != nil {
			t.Fatalf("record %q: %v", kv[0], err)
		}
		keys, recs = append(keys, string(kv[0])), append(recs, r)
	}
	return keys, recs
}

// boxesText writes a record's groups compactly: label[instance:(corners,difficult)].
func boxesText(r *caffepb.AnnotatedDatum) string {
	var parts []string
	for _, g := range r.GetAnnotationGroup() {
		var annos []string
		for _, a := range g.GetAnnotation() {
			b := a.GetBbox()
			annos = append(annos, fmt.Sprintf("%d:(%g,%g,%g,%g,%v)", a.GetInstanceId(), b.GetXmin(), b.GetYmin(), b.GetXmax(), b.GetYmax(), b.GetDifficult()))
		}
		parts = append(parts, fmt.Sprintf("%d[%s]", g.GetGroupLabel(), strings.Join(annos, " ")))
	}
	return strings.Join(parts, " ")
}

func TestConvertAnnosetDetection(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		captureLog(t)
		a, b := testImage(40, 20, 0), testImage(10, 10, 5)
		tree := newImageTree(t, map[string][]byte{
			"JPEGImages/a.png": encodePNG(t, a),
			"JPEGImages/b.png": encodePNG(t, b),
			"Annotations/a.xml": vocFile(40, 20, vocObject("dog", 0, 4, 2, 20, 18), vocObject("cat", 1, 0, 0, 10, 10),
				vocObject("dog", 0, 30, 10, 40, 20)),
			"labelmap.prototxt": []byte(testLabelMap),
		}, "JPEGImages/a.png Annotations/a.xml\nJPEGImages/b.png Annotations/missing.xml\n")
		db := t.TempDir() + "/db"
		code, _, stderr := runCmd("convert_annoset", "-backend", name, "-anno_type", "detection", "-encoded",
			"-label_map_file", tree.root+"labelmap.prototxt", tree.root, tree.list, db)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		keys, recs := readAnnotated(t, backend, db)
		if len(recs) != 2 || keys[0] != "00000000_JPEGImages/a.png" || keys[1] != "00000001_JPEGImages/b.png" {
			t.Fatalf("keys %q", keys)
		}
		if got, want := boxesText(recs[0]), "2[0:(0.1,0.1,0.5,0.9,false) 1:(0.75,0.5,1,1,false)] 1[0:(0,0,0.25,0.5,true)]"; got != want {
			t.Errorf("boxes of a.png:\n got %s\nwant %s", got, want)
		}
		if recs[1].Type == nil || len(recs[1].GetAnnotationGroup()) != 0 {
			t.Errorf("b.png (no annotation file): type %v, %d groups; want BBOX and none", recs[1].Type, len(recs[1].GetAnnotationGroup()))
		}
		d := recs[0].GetDatum()
		if !d.GetEncoded() || d.GetLabel() != -1 {
			t.Errorf("a.png's datum: encoded %v label %d; want the PNG's bytes with label -1", d.GetEncoded(), d.GetLabel())
		}
		if img, _, err := image.Decode(bytes.NewReader(d.GetData())); err != nil || img.Bounds().Dx() != 40 {
			t.Errorf("a.png's datum does not decode to the image: %v", err)
		}
	})
}

// -min_dim/-max_dim keep the aspect; boxes stay normalized to the
// annotation's size. Classification stores the labels.
func TestConvertAnnosetResizeAndClassification(t *testing.T) {
	captureLog(t)
	tree := newImageTree(t, map[string][]byte{
		"a.png":   encodePNG(t, testImage(40, 20, 0)),
		"a.txt":   []byte("3 4 2 20 18\n"),
		"b.png":   encodePNG(t, testImage(10, 10, 1)),
		"map.txt": []byte(testLabelMap),
	}, "a.png a.txt\n")
	db := t.TempDir() + "/db"
	if code, _, stderr := runCmd("convert_annoset", "-anno_type", "detection", "-label_type", "txt", "-min_dim", "30", "-max_dim", "50",
		tree.root, tree.list, db); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, recs := readAnnotated(t, caffepb.DataParameter_LMDB, db)
	// The short side 20 -> 30 would make the long side 60 > 50: scaled by 50/40.
	if d := recs[0].GetDatum(); d.GetHeight() != 25 || d.GetWidth() != 50 || d.GetEncoded() {
		t.Errorf("resized to %dx%d (encoded %v), want 25x50 raw", d.GetHeight(), d.GetWidth(), d.GetEncoded())
	}
	if got, want := boxesText(recs[0]), "3[0:(0.1,0.1,0.5,0.9,false)]"; got != want {
		t.Errorf("boxes %s, want %s", got, want)
	}

	list := writeTestFile(t, t.TempDir(), "list.txt", []byte("a.png 4\nb.png 9\n"))
	db2 := t.TempDir() + "/db"
	if code, _, stderr := runCmd("convert_annoset", tree.root, list, db2); code != 0 {
		t.Fatalf("classification: exit %d: %s", code, stderr)
	}
	_, recs = readAnnotated(t, caffepb.DataParameter_LMDB, db2)
	if len(recs) != 2 || recs[0].Type != nil || recs[0].GetDatum().GetLabel() != 4 || recs[1].GetDatum().GetLabel() != 9 {
		t.Errorf("classification records: %v", recs)
	}
}

func TestConvertAnnosetErrors(t *testing.T) {
	captureLog(t)
	tree := newImageTree(t, map[string][]byte{
		"a.png":   encodePNG(t, testImage(4, 4, 0)),
		"a.xml":   vocFile(4, 4, vocObject("horse", 0, 0, 0, 2, 2)),
		"map.txt": []byte(testLabelMap),
	}, "a.png a.xml\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-anno_type", "detection", "-label_map_file", tree.root + "map.txt"}, `unknown name "horse"`},
		{[]string{"-anno_type", "detection"}, "needs -label_map_file"},
		{[]string{"-anno_type", "segmentation"}, `-anno_type "segmentation"`},
		{[]string{"-anno_type", "detection", "-label_type", "yaml", "-label_map_file", "x"}, `-label_type "yaml"`},
		{nil, `label "a.xml" is not an integer`},
	} {
		args := append(append([]string{"convert_annoset"}, c.args...), tree.root, tree.list, t.TempDir()+"/db")
		code, _, stderr := runCmd(args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", c.args, code, stderr, c.want)
		}
	}
}

// TestForkExamples runs the SSD and TSN examples of docs/forks.md as
// written, from a copy of the repository's examples and models/forks (the
// commands write next to their inputs): the small SSD's mAP must rise, and
// the TSN net must run.
func TestForkExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the small SSD; -short")
	}
	root := t.TempDir()
	for _, dir := range []string{"examples/ssd", "examples/tsn", "models/forks"} {
		if err := os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join("..", "..", dir))); err != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(filepath.Join(root, "examples/ssd/trainval_lmdb")) // a run here may have left one
	t.Chdir(root)
	logs := captureLog(t)
	for _, cmd := range [][]string{
		{"convert_annoset", "-anno_type", "detection", "-label_map_file", "examples/ssd/labelmap.prototxt",
			"-encoded", "examples/ssd/", "examples/ssd/trainval.txt", "examples/ssd/trainval_lmdb"},
		{"train", "-solver", "examples/ssd/solver.prototxt"},
		{"time", "-model", "models/forks/tsn_bn_inception_train.prototxt", "-iterations", "2"},
	} {
		if code, _, stderr := runCmd(cmd...); code != 0 {
			t.Fatalf("gocaffe %s: exit %d\n%s", strings.Join(cmd, " "), code, stderr)
		}
	}
	var maps []float64
	for _, m := range regexp.MustCompile(`detection_eval = ([0-9.e+-]+)`).FindAllStringSubmatch(logs.String(), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		maps = append(maps, v)
	}
	if len(maps) != 4 || !(maps[0] < 0.2 && maps[3] > 0.7) {
		t.Errorf("the small SSD's mAP at iterations 0, 100, 200, 300: %v; want it to rise from under 0.2 to over 0.7", maps)
	}
	if !strings.Contains(logs.String(), "Average Forward-Backward") {
		t.Error("gocaffe time on the TSN net printed no timing")
	}
}
