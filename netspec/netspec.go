// Package netspec writes Caffe nets from Go code, as pycaffe's net_spec:
// layers are added on the blobs earlier layers made, tops are named after
// their layer unless given, and the result is a NetParameter or its
// prototxt (written the same way every time, as Caffe's C++ would):
//
//	n := netspec.New("LeNet")
//	data := n.Layer("data", "Input", nil, func(l *caffepb.LayerParameter) {
//		l.InputParam = &caffepb.InputParameter{Shape: []*caffepb.BlobShape{{Dim: []int64{64, 1, 28, 28}}}}
//	})
//	conv1 := n.Layer("conv1", "Convolution", netspec.On(data), func(l *caffepb.LayerParameter) {
//		l.ConvolutionParam = &caffepb.ConvolutionParameter{NumOutput: proto.Uint32(20), KernelSize: []uint32{5},
//			WeightFiller: netspec.Filler("xavier")}
//	})
//	n.InPlace("relu1", "ReLU", conv1, nil)
//	text, err := n.Prototxt()
package netspec

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Net is a net being written.
type Net struct {
	p   *caffepb.NetParameter
	err error
}

// Blob is a top of a layer of a Net, to be a later layer's bottom.
type Blob struct {
	net  *Net
	name string
}

// Name is the blob's name in the net.
func (b Blob) Name() string { return b.name }

// New starts a net of this name.
func New(name string) *Net {
	return &Net{p: &caffepb.NetParameter{Name: proto.String(name)}}
}

// On lists bottoms, for Layer.
func On(bottoms ...Blob) []Blob { return bottoms }

// Layer adds a layer of type typ on bottoms with one top named after the
// layer, and returns it; set, if not nil, fills the layer's parameters
// (set may also name the tops: see Tops).
func (n *Net) Layer(name, typ string, bottoms []Blob, set func(*caffepb.LayerParameter)) Blob {
	tops := n.Tops(name, typ, bottoms, []string{name}, set)
	if len(tops) == 0 {
		return Blob{net: n}
	}
	return tops[0]
}

// Tops adds a layer with the given tops (a Data layer's "data" and
// "label", say) and returns them in order.
func (n *Net) Tops(name, typ string, bottoms []Blob, tops []string, set func(*caffepb.LayerParameter)) []Blob {
	l := &caffepb.LayerParameter{Name: proto.String(name), Type: proto.String(typ), Top: tops}
	for _, b := range bottoms {
		if b.net != n || b.name == "" {
			n.fail(fmt.Errorf("layer %q: bottom %q is not a blob of net %q", name, b.name, n.p.GetName()))
			continue
		}
		l.Bottom = append(l.Bottom, b.name)
	}
	if set != nil {
		set(l)
	}
	n.p.Layer = append(n.p.Layer, l)
	out := make([]Blob, len(l.Top))
	for i, t := range l.Top {
		out[i] = Blob{net: n, name: t}
	}
	return out
}

// InPlace adds a layer that writes its result over its bottom (ReLU,
// Dropout, BatchNorm, Scale, ...) and returns that blob.
func (n *Net) InPlace(name, typ string, b Blob, set func(*caffepb.LayerParameter)) Blob {
	return n.Tops(name, typ, On(b), []string{b.name}, set)[0]
}

func (n *Net) fail(err error) {
	if n.err == nil {
		n.err = err
	}
}

// Proto returns the net written so far (a copy), or the first mistake.
func (n *Net) Proto() (*caffepb.NetParameter, error) {
	if n.err != nil {
		return nil, n.err
	}
	return proto.Clone(n.p).(*caffepb.NetParameter), nil
}

// Prototxt returns the net in Caffe's text format (see Text).
func (n *Net) Prototxt() (string, error) {
	p, err := n.Proto()
	if err != nil {
		return "", err
	}
	return Text(p), nil
}

// WriteFile writes the prototxt to path.
func (n *Net) WriteFile(path string) error {
	text, err := n.Prototxt()
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o666)
}

// Filler returns a filler of this type; set, if given, fills in the rest
// (std, value, min, max, variance_norm).
func Filler(typ string, set ...func(*caffepb.FillerParameter)) *caffepb.FillerParameter {
	f := &caffepb.FillerParameter{Type: proto.String(typ)}
	for _, s := range set {
		s(f)
	}
	return f
}

// Param is a ParamSpec with these multipliers.
func Param(lrMult, decayMult float32) *caffepb.ParamSpec {
	return &caffepb.ParamSpec{LrMult: proto.Float32(lrMult), DecayMult: proto.Float32(decayMult)}
}

// Phase is an include rule for one phase.
func Phase(p caffepb.Phase) *caffepb.NetStateRule {
	return &caffepb.NetStateRule{Phase: p.Enum()}
}
