package datalayer

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "AnnotatedData",
		New32: newAnnotatedData[float32], New64: newAnnotatedData[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newAnnotatedDataGPU[float32], newAnnotatedDataGPU[float64])},
		ONNX:     layer.ONNXInput,
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// AnnotatedData is SSD's data layer (weiliu89/caffe): it reads
// AnnotatedDatum records (images with object boxes, as convert_annoset
// writes them) from a LevelDB or LMDB database, in key order from
// data_param.source, and augments each image with its boxes as
// data.Augmenter describes (transform_param's distort_param, expand_param,
// resize_param, crop and mirror; annotated_data_param's batch_sampler).
//
// Top 0 is the batch of images. Top 1, when present, holds SSD's ground
// truth: one row of 8 values per box left after augmentation, [item,
// label, instance, xmin, ymin, xmax, ymax, difficult], in a 1 x 1 x rows x
// 8 blob whose rows change from batch to batch (one row of -1 when no box
// is left); for records without an annotation type (and no anno_type in
// annotated_data_param) it holds their datum labels instead, batch x 1 x 1
// x 1.
//
// resize_param's FIT_SMALL_SIZE gives every image its own size, so it
// needs batch_size 1. Prefetching, rand_skip and data-parallel sharding
// are those of Data.
type annotatedDataLayer[T layer.Float] struct {
	layer.Base[T]
	prefetching[T]
}

func newAnnotatedData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &annotatedDataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "AnnotatedData".
func (*annotatedDataLayer[T]) Type() string { return "AnnotatedData" }

// Counts returns no bottoms and one or two tops (data, labels).
func (*annotatedDataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Between(1, 2)}
}

// LayerSetUp opens the database, shapes the tops from its first record and
// starts prefetching.
func (l *annotatedDataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.Close(); err != nil {
		return err
	}
	dp := l.Param().GetDataParam()
	batchSize := int(dp.GetBatchSize())
	if batchSize <= 0 {
		return errors.New("data_param.batch_size must be positive")
	}
	tp := l.Param().GetTransformParam()
	fitSmall := tp.GetResizeParam() != nil && tp.GetResizeParam().GetResizeMode() == caffepb.ResizeParameter_FIT_SMALL_SIZE
	if fitSmall && batchSize != 1 {
		return fmt.Errorf("resize_param's FIT_SMALL_SIZE gives each image its own size: it needs batch_size 1, not %d", batchSize)
	}
	rng := l.RNG()
	ap := l.Param().GetAnnotatedDataParam()
	aug, err := data.NewAugmenter[T](tp, ap.GetBatchSampler(), l.Phase(), rng.Uint64())
	if err != nil {
		return err
	}
	aug.Transformer().SetLogger(l.Logger())
	aug.Transformer().SetMaxImagePixels(l.Context().Settings().MaxImagePixels)
	src := &annotatedSource[T]{aug: aug, withLabels: len(top) > 1, fitSmall: fitSmall}
	if err := src.open(dp, rng.Uint64(), l.Logger()); err != nil {
		return err
	}
	labelShape, err := src.firstRecord(ap, batchSize)
	if err != nil {
		src.close()
		return err
	}
	if l.Phase() == caffepb.Phase_TRAIN {
		src.rank, src.ranks = l.Context().Shard()
	}
	shape := []int{batchSize, src.item[0], src.item[1], src.item[2]}
	logf.Debugf(l.Logger(), "output data size: %d,%d,%d,%d", shape[0], shape[1], shape[2], shape[3])
	if err := shapeDataTops(top, shape, labelShape); err != nil {
		src.close()
		return err
	}
	return startPrefetching(l, &l.prefetching, &l.Base, src, shape, labelShape)
}

// Reshape has nothing to do: Forward shapes the tops like the batch.
func (*annotatedDataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next prefetched batch into the tops.
func (l *annotatedDataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return l.forward(top) }

// BackwardCPU has nothing to do: data layers have no bottoms.
func (*annotatedDataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// annotatedSource reads AnnotatedDatum records for the prefetch goroutine.
type annotatedSource[T layer.Float] struct {
	recordCursor
	aug        *data.Augmenter[T]
	rec        data.AnnotatedRecord
	item       [3]int // channels, height, width of an output image
	withLabels bool
	annotated  bool // labels are box rows (an annotation type), not datum labels
	annoType   *caffepb.AnnotatedDatum_AnnotationType
	// typeFromParam: annotated_data_param.anno_type overrides the records'.
	typeFromParam bool
	fitSmall      bool // each image has its own size
	items         []*annotatedItem
}

// annotatedItem is one image of the batch being loaded, with its own
// copy of the record's pixels (the cursor's bytes change with the next
// record), decoder, plan and scratch memory, reused from batch to batch.
type annotatedItem struct {
	key     []byte
	encoded []byte
	pixels  []byte
	floats  []float32
	img     data.DatumRecord
	objects []data.Object
	label   int32
	dec     data.ImageReader
	plan    data.AugmentPlan
	scratch data.AugmentScratch
	err     error
}

// firstRecord reads the record under the cursor to learn the output shape
// and the kind of labels, and returns the label top's shape (nil without
// one).
func (s *annotatedSource[T]) firstRecord(ap *caffepb.AnnotatedDataParameter, batchSize int) (labelShape []int, err error) {
	defer recoverMappedFault(s.source, &err, debug.SetPanicOnFault(true))
	if err := s.rec.Parse(s.cursor.Value()); err != nil {
		return nil, s.recordError(err)
	}
	if ap != nil && ap.AnnoType != nil {
		if s.rec.HasType {
			logf.Warnf(s.log, "type stored in AnnotatedDatum is shadowed.")
		}
		s.annoType, s.typeFromParam = ap.AnnoType, true
	} else if s.rec.HasType {
		t := s.rec.Type
		s.annoType = &t
	}
	s.annotated = s.annoType != nil
	it := &annotatedItem{}
	if err := it.take(&s.rec, s.cursor.Key(), s.aug.Transformer().ColorMode(), s.aug.Transformer().MaxImagePixels()); err != nil {
		return nil, s.recordError(err)
	}
	if err := it.decode(); err != nil {
		return nil, s.recordError(err)
	}
	c, h, w, err := s.aug.OutputShape(it.img.Channels, it.img.Height, it.img.Width)
	if err != nil {
		return nil, s.recordError(err)
	}
	s.item = [3]int{c, h, w}
	if !s.withLabels {
		return nil, nil
	}
	if !s.annotated {
		return []int{batchSize, 1, 1, 1}, nil
	}
	return []int{1, 1, max(len(s.rec.Objects), 1), 8}, nil
}

// take copies the record under the cursor into the item.
func (it *annotatedItem) take(r *data.AnnotatedRecord, key []byte, mode data.ColorMode, maxPixels int64) error {
	it.key = append(it.key[:0], key...)
	it.objects = append(it.objects[:0], r.Objects...)
	it.label = r.Datum.Label
	it.err = nil
	d := &r.Datum
	if d.Encoded {
		it.encoded = append(it.encoded[:0], d.Data...)
		it.dec.Mode, it.dec.MaxPixels = mode, maxPixels
		return nil
	}
	it.encoded = it.encoded[:0]
	it.pixels = append(it.pixels[:0], d.Data...)
	it.floats = append(it.floats[:0], d.FloatData...)
	it.img = data.DatumRecord{Channels: d.Channels, Height: d.Height, Width: d.Width, Data: it.pixels, FloatData: it.floats, Label: d.Label}
	if len(d.Data) == 0 {
		it.img.Data = nil
	}
	_, _, _, err := it.img.Shape()
	return err
}

// decode decodes an encoded item's image.
func (it *annotatedItem) decode() error {
	if len(it.encoded) == 0 {
		return nil
	}
	img, err := it.dec.Decode(it.encoded)
	if err != nil {
		return fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(it.encoded), err)
	}
	it.img = img
	return nil
}

// load fills a batch (SSD's AnnotatedDataLayer::load_batch): the records
// are read in order, decoded in parallel, planned in order (so that a seed
// gives the same batches) and augmented in parallel.
func (s *annotatedSource[T]) load(b *batch[T]) (err error) {
	defer recoverMappedFault(s.source, &err, debug.SetPanicOnFault(true))
	n := b.data.Shape()[0]
	for len(s.items) < n {
		s.items = append(s.items, &annotatedItem{})
	}
	items := s.items[:n]
	if err := s.read(items); err != nil {
		return err
	}
	inParallel(n, func(i int) error { return items[i].decode() }, func(i int, err error) { items[i].err = err })
	for _, it := range items {
		if it.err != nil {
			return s.keyError(it.key, it.err)
		}
		if err := s.aug.Plan(&it.img, it.objects, &it.plan); err != nil {
			return s.keyError(it.key, err)
		}
	}
	if err := s.shapeData(b, items); err != nil {
		return err
	}
	dst := b.data.MutableCPUData()
	size := len(dst) / n
	inParallel(n, func(i int) error {
		it := items[i]
		return s.aug.Apply(&it.img, &it.plan, dst[i*size:(i+1)*size], &it.scratch)
	}, func(i int, err error) { items[i].err = err })
	for _, it := range items {
		if it.err != nil {
			return s.keyError(it.key, it.err)
		}
	}
	if b.label != nil {
		return s.writeLabels(b.label, items)
	}
	return nil
}

// read copies the batch's records out of the database.
func (s *annotatedSource[T]) read(items []*annotatedItem) error {
	mode := s.aug.Transformer().ColorMode()
	for _, it := range items {
		if err := s.skipOthers(); err != nil {
			return err
		}
		if err := s.rec.Parse(s.cursor.Value()); err != nil {
			return s.recordError(err)
		}
		if err := s.checkType(); err != nil {
			return s.recordError(err)
		}
		if err := it.take(&s.rec, s.cursor.Key(), mode, s.aug.Transformer().MaxImagePixels()); err != nil {
			return s.recordError(err)
		}
		if err := s.next(); err != nil {
			return err
		}
	}
	return nil
}

// checkType applies SSD's rule: with an annotation type in the layer
// parameters, records take it; otherwise every record must state one, as
// the first did.
func (s *annotatedSource[T]) checkType() error {
	if !s.annotated || !s.withLabels || s.typeFromParam || s.rec.HasType {
		return nil
	}
	return errors.New("the record has no annotation type but the first one had one; every record must (or set annotated_data_param.anno_type)")
}

// shapeData checks that every image of the batch has the output shape,
// or, with FIT_SMALL_SIZE (one image a batch), shapes the batch like its
// image.
func (s *annotatedSource[T]) shapeData(b *batch[T], items []*annotatedItem) error {
	for _, it := range items {
		p := &it.plan
		got := [3]int{p.Channels, p.Height, p.Width}
		if got == s.item {
			continue
		}
		if s.fitSmall {
			return b.data.Reshape([]int{1, p.Channels, p.Height, p.Width})
		}
		return s.keyError(it.key, fmt.Errorf("the image gives an output of %dx%dx%d, the first record's %dx%dx%d: every record must give the same (resize_param or crop_size make them so)",
			got[0], got[1], got[2], s.item[0], s.item[1], s.item[2]))
	}
	if s.fitSmall {
		return b.data.Reshape([]int{len(items), s.item[0], s.item[1], s.item[2]})
	}
	return nil
}

// writeLabels writes the batch's labels: SSD's ground-truth rows, or the
// datum labels.
func (s *annotatedSource[T]) writeLabels(label *blob.Blob[T], items []*annotatedItem) error {
	if !s.annotated {
		dst := label.MutableCPUData()
		for i, it := range items {
			dst[i] = T(it.label)
		}
		return nil
	}
	rows := 0
	for _, it := range items {
		rows += len(it.plan.Objects)
	}
	if err := label.Reshape([]int{1, 1, max(rows, 1), 8}); err != nil {
		return err
	}
	dst := label.MutableCPUData()
	if rows == 0 {
		for i := range dst {
			dst[i] = -1
		}
		return nil
	}
	k := 0
	for i, it := range items {
		for _, o := range it.plan.Objects {
			b := o.Box
			difficult := T(0)
			if b.Difficult {
				difficult = 1
			}
			copy(dst[k:k+8], []T{T(i), T(o.Label), T(o.Instance), T(b.XMin), T(b.YMin), T(b.XMax), T(b.YMax), difficult})
			k += 8
		}
	}
	return nil
}
