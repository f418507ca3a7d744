package data

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Object is one annotated box of an image: its class (the group_label of
// its AnnotationGroup), its instance id within the class, and its box.
type Object struct {
	Label, Instance int32
	Box             BBox
}

// AnnotatedRecord is an AnnotatedDatum of SSD's databases (written by
// convert_annoset): an image and the boxes of the objects in it. Objects
// lists the annotations group by group, in the record's order, which is the
// order of the rows AnnotatedData writes.
type AnnotatedRecord struct {
	Datum   DatumRecord
	HasType bool // the record says its annotation type
	Type    caffepb.AnnotatedDatum_AnnotationType
	Objects []Object

	msg caffepb.AnnotatedDatum
}

// Parse reads a serialized AnnotatedDatum. Datum.Data aliases the record's
// own message, valid until the next Parse.
func (r *AnnotatedRecord) Parse(b []byte) error {
	r.msg.Reset()
	if err := proto.Unmarshal(b, &r.msg); err != nil {
		return fmt.Errorf("malformed AnnotatedDatum: %w", err)
	}
	r.SetAnnotatedDatum(&r.msg)
	return nil
}

// SetAnnotatedDatum points r at m's image and copies its boxes.
func (r *AnnotatedRecord) SetAnnotatedDatum(m *caffepb.AnnotatedDatum) {
	r.Datum.SetDatum(m.GetDatum())
	r.HasType, r.Type = m.Type != nil, m.GetType()
	r.Objects = r.Objects[:0]
	for _, g := range m.GetAnnotationGroup() {
		for _, a := range g.GetAnnotation() {
			r.Objects = append(r.Objects, Object{Label: g.GetGroupLabel(), Instance: a.GetInstanceId(), Box: BBoxFromProto(a.GetBbox())})
		}
	}
}
