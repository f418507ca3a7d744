package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

const vocXML = `<annotation>
	<folder>VOC2007</folder>
	<filename>000001.jpg</filename>
	<size><width>200</width><height>100</height><depth>3</depth></size>
	<object><name>dog</name><pose>Left</pose><truncated>1</truncated><difficult>0</difficult>
		<bndbox><xmin>20</xmin><ymin>10</ymin><xmax>120</xmax><ymax>90</ymax></bndbox></object>
	<object><name>person</name><difficult>1</difficult>
		<bndbox><xmin>0</xmin><ymin>0</ymin><xmax>50.5</xmax><ymax>100</ymax></bndbox></object>
	<object><name>dog</name><difficult>0</difficult>
		<bndbox><xmin>150</xmin><ymin>50</ymin><xmax>200</xmax><ymax>100</ymax></bndbox></object>
</annotation>`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The three formats give SSD's groups: one per label in order of first
// appearance, instance ids counting within a label, boxes divided by the
// size the file gives.
func TestAnnotationFiles(t *testing.T) {
	labels := map[string]int32{"dog": 12, "person": 15, "18": 3}
	want := "12[0:(0.1,0.1,0.6,0.9,false) 1:(0.75,0.5,1,1,false)] 15[0:(0,0,0.2525,1,true)]"
	groups, err := AnnotationFile{Format: "xml", Labels: labels}.Read(writeTemp(t, "a.xml", vocXML), 100, 200)
	if err != nil {
		t.Fatal(err)
	}
	if got := groupsText(t, groups); got != want {
		t.Errorf("xml:\n got %s\nwant %s", got, want)
	}

	json := `{"image": {"file_name": "x.jpg", "height": 50, "width": 100},
		"annotation": [{"category_id": 18, "iscrowd": 0, "bbox": [10, 5, 40, 20]}, {"category_id": 18, "iscrowd": 1, "bbox": [0, 0, 100, 50]}]}`
	groups, err = AnnotationFile{Format: "json", Labels: labels}.Read(writeTemp(t, "a.json", json), 50, 100)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := "3[0:(0.1,0.1,0.5,0.5,false) 1:(0,0,1,1,true)]"
	if got := groupsText(t, groups); got != wantJSON {
		t.Errorf("json:\n got %s\nwant %s", got, wantJSON)
	}

	groups, err = AnnotationFile{Format: "txt"}.Read(writeTemp(t, "a.txt", "2 10 20 30 40\n\n1 0 0 100 80\n2 50 40 90 80\n"), 80, 100)
	if err != nil {
		t.Fatal(err)
	}
	wantTxt := "2[0:(0.1,0.25,0.3,0.5,false) 1:(0.5,0.5,0.9,1,false)] 1[0:(0,0,1,1,false)]"
	if got := groupsText(t, groups); got != wantTxt {
		t.Errorf("txt:\n got %s\nwant %s", got, wantTxt)
	}
}

func TestAnnotationFileErrors(t *testing.T) {
	labels := map[string]int32{"dog": 1}
	for _, c := range []struct {
		format, text, want string
	}{
		{"xml", vocXML, `unknown name "person"`},
		{"xml", `<annotation><object><name>dog</name></object></annotation>`, "has no bndbox"},
		{"xml", `<annotation><object><name>dog</name><bndbox><xmin>a</xmin></bndbox></object></annotation>`, `corner "a" is not a number`},
		{"xml", `<annotation><object>`, "annotation file"},
		{"json", `{"annotation": [{"category_id": 1, "bbox": [1, 2]}]}`, `unknown name "1"`},
		{"txt", "1 2 3\n", "line 1"},
		{"csv", "", `unknown annotation format "csv"`},
	} {
		_, err := AnnotationFile{Format: c.format, Labels: labels}.Read(writeTemp(t, "f", c.text), 10, 10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want one containing %q", c.format, c.text, err, c.want)
		}
	}
	m, err := ReadLabelMap(writeTemp(t, "map.prototxt", `item { name: "a" label: 1 } item { name: "a" label: 2 }`))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := LabelsByName(m, false); err != nil || l["a"] != 2 {
		t.Errorf("lenient label map: %v, %v (want the last, 2)", l, err)
	}
	if _, err := LabelsByName(m, true); err == nil {
		t.Error("strict label map with a name twice: no error")
	}
}

// groupsText writes groups compactly: label[instance:(xmin,ymin,xmax,ymax,difficult) ...].
func groupsText(t *testing.T, groups []*caffepb.AnnotationGroup) string {
	t.Helper()
	var parts []string
	for _, g := range groups {
		var annos []string
		for _, a := range g.GetAnnotation() {
			b := a.GetBbox()
			annos = append(annos, fmt.Sprintf("%d:(%g,%g,%g,%g,%v)", a.GetInstanceId(), b.GetXmin(), b.GetYmin(), b.GetXmax(), b.GetYmax(), b.GetDifficult()))
		}
		parts = append(parts, fmt.Sprintf("%d[%s]", g.GetGroupLabel(), strings.Join(annos, " ")))
	}
	return strings.Join(parts, " ")
}
