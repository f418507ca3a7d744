package data

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// This file reads the annotation files of SSD's convert_annoset: VOC XML,
// the JSON its COCO scripts write, and plain text, into the groups of an
// AnnotatedDatum, with the same grouping, instance numbering and
// normalization as SSD's ReadXMLToAnnotatedDatum and its siblings.

// ReadLabelMap reads a LabelMap in protobuf text format (SSD's
// labelmap_voc.prototxt).
func ReadLabelMap(path string) (*caffepb.LabelMap, error) {
	m := &caffepb.LabelMap{}
	if err := protoio.ReadProtoFromTextFile(path, m); err != nil {
		return nil, fmt.Errorf("label map: %w", err)
	}
	return m, nil
}

// LabelsByName maps the label map's names to labels. With strict, a name
// given twice is an error (convert_annoset's -check_label); otherwise the
// last one wins, as in SSD.
func LabelsByName(m *caffepb.LabelMap, strict bool) (map[string]int32, error) {
	labels := make(map[string]int32, len(m.GetItem()))
	for _, it := range m.GetItem() {
		if _, dup := labels[it.GetName()]; dup && strict {
			return nil, fmt.Errorf("label map: the name %q is given more than once", it.GetName())
		}
		labels[it.GetName()] = it.GetLabel()
	}
	return labels, nil
}

// AnnotationFile is how convert_annoset reads one image's annotation file.
type AnnotationFile struct {
	// Format is "xml" (VOC, ILSVRC), "json" (SSD's COCO files) or "txt"
	// (lines "label xmin ymin xmax ymax" in pixels).
	Format string
	// Labels maps class names (xml) or category ids (json) to labels.
	Labels map[string]int32
	// Log receives the warnings SSD prints (boxes past the image, a size
	// that differs from the image's); nil is slog.Default().
	Log *slog.Logger
}

// Read reads the annotation file at path for an image of imgH x imgW
// pixels into AnnotationGroups with boxes normalized by the size the file
// gives (the image's when it gives none).
func (a AnnotationFile) Read(path string, imgH, imgW int) ([]*caffepb.AnnotationGroup, error) {
	raw, err := fileio.ReadFile(path, fileio.ProtoLimit)
	if err != nil {
		return nil, err
	}
	var g annotationGroups
	switch a.Format {
	case "xml":
		err = a.readXML(raw, path, imgH, imgW, &g)
	case "json":
		err = a.readJSON(raw, path, imgH, imgW, &g)
	case "txt":
		err = a.readTxt(raw, path, imgH, imgW, &g)
	default:
		return nil, fmt.Errorf("unknown annotation format %q (want xml, json or txt)", a.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("annotation file %s: %w", path, err)
	}
	return g.groups, nil
}

// annotationGroups collects boxes into one group per label, in the order
// labels first appear; a box's instance id counts the boxes of its label
// before it.
type annotationGroups struct{ groups []*caffepb.AnnotationGroup }

func (g *annotationGroups) add(label int32, b BBox) {
	var grp *caffepb.AnnotationGroup
	for _, x := range g.groups {
		if x.GetGroupLabel() == label {
			grp = x
		}
	}
	if grp == nil {
		grp = &caffepb.AnnotationGroup{GroupLabel: proto.Int32(label)}
		g.groups = append(g.groups, grp)
	}
	grp.Annotation = append(grp.Annotation, &caffepb.Annotation{
		InstanceId: proto.Int32(int32(len(grp.Annotation))),
		Bbox: &caffepb.NormalizedBBox{Xmin: proto.Float32(b.XMin), Ymin: proto.Float32(b.YMin),
			Xmax: proto.Float32(b.XMax), Ymax: proto.Float32(b.YMax), Difficult: proto.Bool(b.Difficult)},
	})
}

// fileSize returns the size the annotation file gives, or the image's,
// warning as SSD does when they differ.
func (a AnnotationFile) fileSize(path string, h, w, imgH, imgW int) (int, int, error) {
	if h == 0 && w == 0 {
		h, w = imgH, imgW
	}
	if h != imgH || w != imgW {
		logf.Warnf(a.Log, "%s gives the image size %dx%d (height x width), the image is %dx%d", path, h, w, imgH, imgW)
	}
	if h <= 0 || w <= 0 {
		return 0, 0, fmt.Errorf("no valid image width/height (%dx%d)", w, h)
	}
	return h, w, nil
}

// box normalizes a pixel box, warning as SSD does about boxes past the
// image or inverted.
func (a AnnotationFile) box(path string, xmin, ymin, xmax, ymax float32, h, w int, difficult bool) BBox {
	fw, fh := float32(w), float32(h)
	if xmin < 0 || ymin < 0 || xmax < 0 || ymax < 0 || xmin > fw || xmax > fw || ymin > fh || ymax > fh {
		logf.Warnf(a.Log, "%s: bounding box (%g,%g)-(%g,%g) exceeds the image boundary (%dx%d)", path, xmin, ymin, xmax, ymax, w, h)
	}
	if xmin > xmax || ymin > ymax {
		logf.Warnf(a.Log, "%s: bounding box (%g,%g)-(%g,%g) is irregular", path, xmin, ymin, xmax, ymax)
	}
	return BBox{XMin: xmin / fw, YMin: ymin / fh, XMax: xmax / fw, YMax: ymax / fh, Difficult: difficult}
}

func (a AnnotationFile) label(name string) (int32, error) {
	l, ok := a.Labels[name]
	if !ok {
		return 0, fmt.Errorf("unknown name %q: it is not in the label map", name)
	}
	return l, nil
}

// vocAnnotation is the part of a VOC annotation convert_annoset reads.
type vocAnnotation struct {
	Size struct {
		Width  string `xml:"width"`
		Height string `xml:"height"`
	} `xml:"size"`
	Objects []struct {
		Name      string `xml:"name"`
		Difficult string `xml:"difficult"`
		Box       *struct {
			XMin string `xml:"xmin"`
			YMin string `xml:"ymin"`
			XMax string `xml:"xmax"`
			YMax string `xml:"ymax"`
		} `xml:"bndbox"`
	} `xml:"object"`
}

func (a AnnotationFile) readXML(raw []byte, path string, imgH, imgW int, g *annotationGroups) error {
	var v vocAnnotation
	if err := xml.Unmarshal(raw, &v); err != nil {
		return err
	}
	h, w, err := a.fileSize(path, atoiOrZero(v.Size.Height), atoiOrZero(v.Size.Width), imgH, imgW)
	if err != nil {
		return err
	}
	for i, o := range v.Objects {
		label, err := a.label(strings.TrimSpace(o.Name))
		if err != nil {
			return fmt.Errorf("object %d: %w", i+1, err)
		}
		if o.Box == nil {
			return fmt.Errorf("object %d (%s) has no bndbox", i+1, o.Name)
		}
		// VOC's corners are whole pixels; some sets write decimals, which
		// are kept (SSD's integer parse would read them as 0).
		var c [4]float32
		for k, s := range []string{o.Box.XMin, o.Box.YMin, o.Box.XMax, o.Box.YMax} {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
			if err != nil && strings.TrimSpace(s) != "" {
				return fmt.Errorf("object %d (%s): bndbox corner %q is not a number", i+1, o.Name, s)
			}
			c[k] = float32(f)
		}
		g.add(label, a.box(path, c[0], c[1], c[2], c[3], h, w, strings.TrimSpace(o.Difficult) == "1"))
	}
	return nil
}

func atoiOrZero(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// cocoAnnotation is the JSON SSD's COCO scripts write per image.
type cocoAnnotation struct {
	Image struct {
		Height int `json:"height"`
		Width  int `json:"width"`
	} `json:"image"`
	Annotation []struct {
		CategoryID json.Number `json:"category_id"`
		IsCrowd    int         `json:"iscrowd"`
		BBox       []float32   `json:"bbox"` // x, y, width, height
	} `json:"annotation"`
}

func (a AnnotationFile) readJSON(raw []byte, path string, imgH, imgW int, g *annotationGroups) error {
	var v cocoAnnotation
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	h, w, err := a.fileSize(path, v.Image.Height, v.Image.Width, imgH, imgW)
	if err != nil {
		return err
	}
	for i, o := range v.Annotation {
		label, err := a.label(o.CategoryID.String())
		if err != nil {
			return fmt.Errorf("annotation %d: %w", i+1, err)
		}
		if len(o.BBox) != 4 {
			return fmt.Errorf("annotation %d: bbox has %d values, want 4 (x, y, width, height)", i+1, len(o.BBox))
		}
		x, y := o.BBox[0], o.BBox[1]
		g.add(label, a.box(path, x, y, x+o.BBox[2], y+o.BBox[3], h, w, o.IsCrowd != 0))
	}
	return nil
}

func (a AnnotationFile) readTxt(raw []byte, path string, imgH, imgW int, g *annotationGroups) error {
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return fmt.Errorf("line %d: want \"label xmin ymin xmax ymax\", got %q", line, sc.Text())
		}
		label, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return fmt.Errorf("line %d: label %q is not an integer", line, f[0])
		}
		var c [4]float32
		for k := range c {
			v, err := strconv.ParseFloat(f[k+1], 32)
			if err != nil {
				return fmt.Errorf("line %d: %q is not a number", line, f[k+1])
			}
			c[k] = float32(v)
		}
		g.add(int32(label), a.box(path, c[0], c[1], c[2], c[3], imgH, imgW, false))
	}
	return errors.Join(sc.Err())
}
