package net

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// CopyTrainedLayersFrom loads the weights of a trained net (a NetParameter
// with blobs, as read from a .caffemodel) into the layers of the same name.
// Layers of the model that this net lacks are skipped; every blob must have
// the shape this net's layer expects. Everything is checked before anything
// is copied, so a mismatch leaves the net as it was. As in Caffe, a model
// layer goes to the first of several net layers of its name.
func (n *Net[T]) CopyTrainedLayersFrom(model *caffepb.NetParameter) error {
	layers := make([]modelLayer, len(model.Layer))
	for i, src := range model.Layer {
		layers[i] = modelLayer{src.GetName(), src.Blobs}
	}
	jobs, err := n.matchModel(layers)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := j.target.FromProto(model.Layer[j.layer].Blobs[j.blob], false); err != nil {
			return err
		}
	}
	return nil
}

// modelLayer is a layer of a model as matchModel sees it: its name and
// its blobs (their shapes: the values may be elsewhere, copyStreamed).
type modelLayer struct {
	name  string
	blobs []*caffepb.BlobProto
}

// copyJob is a blob of the net and the model's blob it is loaded from.
type copyJob[T Float] struct {
	target      *blob.Blob[T]
	layer, blob int // model[layer].blobs[blob]
}

// matchModel pairs the blobs of the net's layers with those of the
// model's layers of the same name, checking their number and shapes.
func (n *Net[T]) matchModel(model []modelLayer) ([]copyJob[T], error) {
	var jobs []copyJob[T]
	for li, src := range model {
		id := n.firstLayerNamed(src.name)
		if id < 0 {
			logf.Debugf(n.log, "Ignoring source layer %s", src.name)
			continue
		}
		targets := n.layers[id].layer.LayerBase().Blobs()
		if len(targets) != len(src.blobs) {
			return nil, fmt.Errorf("incompatible number of blobs for layer %q: the model has %d, the net's layer %d", src.name, len(src.blobs), len(targets))
		}
		for j, t := range targets {
			if !t.ShapeEquals(src.blobs[j]) {
				return nil, fmt.Errorf("cannot copy param %d weights from layer %q; shape mismatch. Source param shape is %s; target param shape is %s. "+
					"To learn this layer's parameters from scratch rather than copying from a saved net, rename the layer",
					j, src.name, protoShapeString(src.blobs[j]), t.ShapeString())
			}
			jobs = append(jobs, copyJob[T]{t, li, j})
		}
	}
	if len(jobs) == 0 {
		// Legal (Caffe copies nothing silently), but almost always a
		// mistake: a model of another net, or renamed layers.
		names := 0
		for _, src := range model {
			if len(src.blobs) > 0 {
				names++
			}
		}
		logf.Warnf(n.log, "No weights were copied into net %q: the model has %d layers (%d with weights) and none of them matches a layer of the net by name and with weights", n.name, len(model), names)
	}
	return jobs, nil
}

// protoShapeString renders a BlobProto's shape as ShapeString does.
func protoShapeString(p *caffepb.BlobProto) string {
	b, _ := blob.New[float32]()
	dims := p.GetShape().GetDim()
	if p.Num != nil || p.Channels != nil || p.Height != nil || p.Width != nil {
		dims = []int64{int64(p.GetNum()), int64(p.GetChannels()), int64(p.GetHeight()), int64(p.GetWidth())}
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		shape[i] = int(d)
	}
	if err := b.Reshape(shape); err != nil {
		return fmt.Sprint(dims)
	}
	return b.ShapeString()
}

// CopyTrainedLayersFromFile loads weights from a .caffemodel (binary
// NetParameter, upgraded from older formats as needed) or, when the file is
// HDF5 (as Caffe, by its signature, not its name), from Caffe's HDF5 weights
// (see CopyTrainedLayersFromHDF5).
func (n *Net[T]) CopyTrainedLayersFromFile(path string) error {
	if hdf5.IsHDF5(path) {
		return n.CopyTrainedLayersFromHDF5(path)
	}
	switch err := n.copyStreamed(path); {
	case err == nil:
		return nil
	case !errors.Is(err, errNotStreamed):
		return fmt.Errorf("%s: %w", path, err)
	}
	// An older format, NVCaffe's raw values or a malformed file: decoded
	// whole, upgraded, and copied.
	model, err := netproto.ReadNetParamsFromBinaryFile(path, n.log)
	if err != nil {
		return err
	}
	// The file's bytes, as large as the weights, are garbage now: collect
	// them before the blobs' memory is allocated, which then reuses theirs
	// instead of raising the process's peak by the model's size (a
	// deploy ResNet-50's 102 MB file: about a third of its resident peak).
	runtime.GC()
	if err := n.CopyTrainedLayersFrom(model); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// And the decoded model (no longer used), as large again, now that
	// the blobs hold the weights: the collector's next goal is then twice
	// what the net holds, not twice that plus the model (the first pass's
	// fold and packing would otherwise grow the heap to it: 809 MB for a
	// deploy ResNet-50 whose net holds 300).
	runtime.GC()
	return nil
}

// ToProto returns the net as a NetParameter holding every layer's parameter
// and learnable blobs (and their diffs if writeDiff): the content of a
// .caffemodel.
func (n *Net[T]) ToProto(writeDiff bool) *caffepb.NetParameter {
	p := &caffepb.NetParameter{Name: proto.String(n.name)}
	for _, r := range n.layers {
		lp := proto.Clone(r.layer.LayerBase().Param()).(*caffepb.LayerParameter)
		lp.Blobs = nil
		for _, b := range r.layer.LayerBase().Blobs() {
			lp.Blobs = append(lp.Blobs, b.ToProto(writeDiff))
		}
		p.Layer = append(p.Layer, lp)
	}
	return p
}

// ToProtoRaw returns the net as ToProto does, but with each blob in
// NVCaffe's compact form (blob.ToProtoRaw): raw_data, and raw_diff if
// writeDiff, of the type the blob is stored in, as NVCaffe writes its
// caffemodels unless store_blobs_in_old_format is set. gocaffe stores every
// blob in FLOAT (DOUBLE in a float64 net) whatever NVCaffe's precision
// fields ask, so that is the type written: rounding the weights to the
// FLOAT16 a layer asks for would make a resumed run differ from an
// uninterrupted one. gocaffe and NVCaffe read these files; BVLC Caffe reads
// only ToProto's.
func (n *Net[T]) ToProtoRaw(writeDiff bool) (*caffepb.NetParameter, error) {
	typ := blob.RawType[T]()
	p := &caffepb.NetParameter{Name: proto.String(n.name)}
	for _, r := range n.layers {
		lp := proto.Clone(r.layer.LayerBase().Param()).(*caffepb.LayerParameter)
		lp.Blobs = nil
		for j, b := range r.layer.LayerBase().Blobs() {
			bp, err := b.ToProtoRaw(typ, writeDiff)
			if err != nil {
				return nil, fmt.Errorf("layer %q blob %d: %w", r.name, j, err)
			}
			lp.Blobs = append(lp.Blobs, bp)
		}
		p.Layer = append(p.Layer, lp)
	}
	return p, nil
}

// ShareTrainedLayersWith makes this net's layers use the learnable blobs of
// other's layers of the same name (a solver's test nets share the train
// net's weights this way). As in Caffe, each of other's layers is shared
// with the first of this net's layers of its name.
func (n *Net[T]) ShareTrainedLayersWith(other *Net[T]) error {
	for _, src := range other.layers {
		id := n.firstLayerNamed(src.name)
		if id < 0 {
			continue
		}
		targets, sources := n.layers[id].layer.LayerBase().Blobs(), src.layer.LayerBase().Blobs()
		if len(targets) != len(sources) {
			return fmt.Errorf("incompatible number of blobs for layer %q: %d here, %d in the shared net", src.name, len(targets), len(sources))
		}
		for j, t := range targets {
			if !t.SameShape(sources[j]) {
				return fmt.Errorf("layer %q param %d: shape %s here, %s in the shared net", src.name, j, t.ShapeString(), sources[j].ShapeString())
			}
			if err := t.ShareData(sources[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// zeroDiff zeroes a parameter's diff where it lives: on the device for a
// GPU net, so that no copy moves it.
func zeroDiff[T Float](p *blob.Blob[T], n *Net[T]) error {
	d := n.ctx.Device()
	if d == nil {
		clear(p.MutableCPUDiff())
		return nil
	}
	ptr, err := p.MutableGPUDiff()
	if err != nil {
		return err
	}
	var z T
	return d.Memset(ptr, 0, p.Count()*int(unsafe.Sizeof(z)))
}

// forwardDebugInfo logs the mean absolute value of layer i's tops and
// parameters (NetParameter.debug_info).
func (n *Net[T]) forwardDebugInfo(i int) {
	r := &n.layers[i]
	for j, t := range r.tops {
		logf.Infof(n.log, "    [Forward] Layer %s, top blob %s data: %v", r.name, n.blobs[r.topIDs[j]].name, meanAbs(t.AsumData(), t.Count()))
	}
	for j, p := range r.layer.LayerBase().Blobs() {
		logf.Infof(n.log, "    [Forward] Layer %s, param blob %d data: %v", r.name, j, meanAbs(p.AsumData(), p.Count()))
	}
}

// backwardDebugInfo logs the mean absolute gradients of layer i.
func (n *Net[T]) backwardDebugInfo(i int) {
	r := &n.layers[i]
	for j, b := range r.bottoms {
		if r.bottomNeedBackward[j] {
			logf.Infof(n.log, "    [Backward] Layer %s, bottom blob %s diff: %v", r.name, n.blobs[r.bottomIDs[j]].name, meanAbs(b.AsumDiff(), b.Count()))
		}
	}
	lb := r.layer.LayerBase()
	for j, p := range lb.Blobs() {
		if lb.ParamPropagateDown(j) {
			logf.Infof(n.log, "    [Backward] Layer %s, param blob %d diff: %v", r.name, j, meanAbs(p.AsumDiff(), p.Count()))
		}
	}
}

func meanAbs[T Float](asum T, count int) float64 {
	if count == 0 {
		return 0
	}
	return float64(asum) / float64(count)
}
