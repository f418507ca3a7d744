package datalayer

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Data",
		New32: newData[float32], New64: newData[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newDataGPU[float32], newDataGPU[float64])},
		ONNX:     layer.ONNXInput,
		NoGolden: "it reads an LMDB or LevelDB database, which the golden nets do not",
	})
}

// Data reads Datum records from a LevelDB or LMDB database, in key order
// from data_param.source, and produces batches of data_param.batch_size
// transformed items (transform_param) and, with a second top, their labels
// (Caffe's DataLayer). At the end of the database it starts again from the
// first record. data_param.rand_skip skips a random number of records in
// [0, rand_skip) at the start, so that parallel runs see the data in
// different phases. As in Caffe, each batch takes the shape of its first
// record: records of several sizes pass one batch at a time (batch_size
// 1), while the records of one batch must agree.
//
// A goroutine loads data_param.prefetch batches ahead (default 4; 0 loads
// each batch in Forward). Its random crops, mirrors and skip come from its
// own generator, seeded from the layer's at setup, so a fixed seed gives a
// fixed sequence of batches. Call Close to stop it and close the database.
type dataLayer[T layer.Float] struct {
	layer.Base[T]
	prefetching[T]
}

func newData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &dataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Data".
func (*dataLayer[T]) Type() string { return "Data" }

// Counts returns no bottoms and one or two tops (data, labels).
func (*dataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Between(1, 2)}
}

// LayerSetUp opens the database, shapes the tops from its first record and
// starts prefetching.
func (l *dataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.Close(); err != nil { // set up again: drop the old source
		return err
	}
	dp := l.Param().GetDataParam()
	batchSize := int(dp.GetBatchSize())
	if batchSize <= 0 {
		return errors.New("data_param.batch_size must be positive")
	}
	rng := l.RNG()
	tf, err := data.NewTransformer[T](l.Param().GetTransformParam(), l.Phase(), rng.Uint64())
	if err != nil {
		return err
	}
	tf.SetLogger(l.Logger())
	tf.SetMaxImagePixels(l.Context().Settings().MaxImagePixels)
	src, err := openDatumSource(dp, tf, rng.Uint64(), l.Logger())
	if err != nil {
		return err
	}
	if l.Phase() == caffepb.Phase_TRAIN {
		// In a data-parallel job each rank's TRAIN net reads every
		// ranks-th record, starting at its rank (Caffe's DataLayer::Skip),
		// so that together the ranks read what one net of their
		// combined batch would. TEST nets read everything.
		src.rank, src.ranks = l.Context().Shard()
	}
	shape := []int{batchSize, src.item[0], src.item[1], src.item[2]}
	logf.Debugf(l.Logger(), "output data size: %d,%d,%d,%d", shape[0], shape[1], shape[2], shape[3])
	var labelShape []int
	if len(top) > 1 {
		labelShape = []int{batchSize}
	}
	if err := shapeDataTops(top, shape, labelShape); err != nil {
		src.close()
		return err
	}
	return startPrefetching(l, &l.prefetching, &l.Base, src, shape, labelShape)
}

// shapeDataTops shapes the data top and, when labelShape is not nil, the
// label top.
func shapeDataTops[T layer.Float](top []*blob.Blob[T], shape, labelShape []int) error {
	if err := top[0].Reshape(shape); err != nil {
		return err
	}
	if labelShape != nil {
		return top[1].Reshape(labelShape)
	}
	return nil
}

// Reshape has nothing to do: Forward shapes the tops like the batch.
func (*dataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next prefetched batch into the tops.
func (l *dataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return l.forward(top) }

// BackwardCPU has nothing to do: data layers have no bottoms.
func (*dataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// recordCursor walks a database's records for a data layer's prefetch
// goroutine: in key order, back to the first after the last, passing the
// records of other ranks in a data-parallel job.
type recordCursor struct {
	source string
	db     data.DB
	cursor data.Cursor
	log    *slog.Logger

	// rank of ranks: the source keeps the records whose position (from
	// the start, counting every record passed, rand_skip's included) is
	// rank modulo ranks, and passes the others.
	rank, ranks int
	position    int
}

// datumSource reads a database's Datum records for the prefetch goroutine.
type datumSource[T layer.Float] struct {
	recordCursor
	tf      *data.Transformer[T]
	rec     data.DatumRecord
	item    [3]int // channels, height, width of the first record's item
	loads   loadSlots[*batch[T], datumLoad]
	decoder *loaderPool // started with the first encoded record to stream
	jpegs   [][]byte    // a batch's JPEGs, for the device's decoder
}

// datumLoad is a batch's loading state (one of two, loadSlots): its
// encoded records set aside, with their buffers kept from batch to batch,
// the count of them in use, and the wait for their decoding.
type datumLoad struct {
	encoded  []*encodedDatum
	pending  int
	streamed bool // the records went to the decoder as they were read
	decoding sync.WaitGroup
}

// encodedDatum is an encoded record waiting to be decoded: JPEG decoding
// dominates the cost of a batch of encoded images, so a batch's records
// are decoded on several goroutines, each item with its own decoder and
// buffers (reused from batch to batch).
type encodedDatum struct {
	index   int    // position in the batch
	key     []byte // copies: the cursor's bytes change with the next record
	encoded []byte
	dec     data.ImageReader
	img     data.DatumRecord
	plan    data.TransformPlan
	err     error
	done    *sync.WaitGroup // the batch's decoding, while streamed
}

// openDatumSource opens the database, skips rand_skip records at random
// (seed) and reads the item shape from the record found there.
func openDatumSource[T layer.Float](dp *caffepb.DataParameter, tf *data.Transformer[T], seed uint64, log *slog.Logger) (*datumSource[T], error) {
	s := &datumSource[T]{tf: tf}
	if err := s.open(dp, seed, log); err != nil {
		return nil, err
	}
	if err := s.firstShape(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// open opens the database and skips rand_skip records at random (seed).
func (s *recordCursor) open(dp *caffepb.DataParameter, seed uint64, log *slog.Logger) error {
	db, err := data.Open(dp.GetBackend(), dp.GetSource(), data.Read)
	if err != nil {
		return err
	}
	s.source, s.db, s.log = dp.GetSource(), db, log
	if s.cursor, err = db.NewCursor(); err != nil {
		db.Close()
		return fmt.Errorf("database %s: %w", s.source, err)
	}
	if err := s.skipRandom(dp.GetRandSkip(), seed); err != nil {
		s.close()
		return err
	}
	return nil
}

func (s *recordCursor) skipRandom(randSkip uint32, seed uint64) (err error) {
	defer recoverMappedFault(s.source, &err, debug.SetPanicOnFault(true))
	if !s.cursor.Valid() {
		return fmt.Errorf("database %s is empty", s.source)
	}
	if randSkip > 0 {
		skip := mathfn.NewRNG(seed).IntN(int(randSkip))
		logf.Debugf(s.log, "Skipping first %d data points.", skip)
		for range skip {
			if err := s.next(); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstShape reads the item shape from the record under the cursor.
func (s *datumSource[T]) firstShape() (err error) {
	defer recoverMappedFault(s.source, &err, debug.SetPanicOnFault(true))
	if err := s.rec.Parse(s.cursor.Value()); err != nil {
		return s.recordError(err)
	}
	shape, err := s.tf.InferRecordShape(&s.rec)
	if err != nil {
		return s.recordError(err)
	}
	s.item = [3]int{shape[1], shape[2], shape[3]}
	return nil
}

// load fills a batch with the next records (Caffe's load_batch): begin,
// then finish.
func (s *datumSource[T]) load(b *batch[T]) error {
	if err := s.begin(b, nil); err != nil {
		return err
	}
	return s.finish(b)
}

// begin reads a batch's records (splitLoader). Raw records are transformed
// as they are read, after flush; encoded ones are copied aside and start
// decoding on the decoder's goroutines. finish then waits for them and
// transforms them in batch order. The random crops and mirrors are thus
// drawn in the same order whatever the scheduling, and whether or not the
// next batch begins before this one finishes.
func (s *datumSource[T]) begin(b *batch[T], flush func() error) (err error) {
	defer recoverMappedFault(s.source, &err, debug.SetPanicOnFault(true))
	return s.beginBatch(b, flush)
}

// finish transforms (or stages) the batch's encoded records once they
// are decoded (splitLoader).
func (s *datumSource[T]) finish(b *batch[T]) error {
	ld := s.loads.of(b)
	n := b.data.Shape()[0]
	return s.transformEncoded(b, ld, b.data.Count()/n)
}

// recoverMappedFault, deferred with the previous SetPanicOnFault setting,
// turns a fault while reading a memory-mapped database (its file truncated
// or replaced under the reader: SIGBUS, which would otherwise kill the
// process) into an error naming the database. Other panics go on.
func recoverMappedFault(source string, err *error, previous bool) {
	debug.SetPanicOnFault(previous)
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		*err = fmt.Errorf("database %s: its memory-mapped file could not be read at address %#x (was it truncated or rewritten while open?)", source, f.Addr())
		return
	}
	panic(r)
}

func (s *datumSource[T]) beginBatch(b *batch[T], flush func() error) error {
	if b.pix != nil {
		b.pix.reset()
	}
	var labels []T
	if b.label != nil {
		labels = b.label.MutableCPUData()
	}
	n := b.data.Shape()[0]
	ld := s.loads.take(b)
	ld.pending = 0
	size, item := 0, [3]int{}
	// Encoded records start decoding on the cores as soon as they are
	// read, rather than after the whole batch is: reading a batch is one
	// goroutine's work, which the decoders would otherwise wait out.
	// nvJPEG (prefetch_jpeg.go) needs the whole batch first.
	ld.streamed = b.pix == nil || b.pix.jpeg == nil
	for i := range n {
		if err := s.skipOthers(); err != nil {
			return err
		}
		if err := s.rec.Parse(s.cursor.Value()); err != nil {
			return s.recordError(err)
		}
		if i == 0 {
			if err := s.shapeBatch(b); err != nil {
				return err
			}
			size, item = b.data.Count()/n, batchItem(b)
		}
		if s.rec.Encoded {
			e := s.setAside(ld, i)
			if ld.streamed {
				s.decode(ld, e, n)
			}
		} else {
			// A raw record draws its crop and mirror now: the previous
			// batch's draws must come first.
			if flush != nil {
				if err := flush(); err != nil {
					return err
				}
				flush = nil
			}
			if err := s.readRaw(b, item, i, size); err != nil {
				return err
			}
		}
		if labels != nil {
			labels[i] = T(s.rec.Label)
		}
		if err := s.next(); err != nil {
			return err
		}
	}
	return nil
}

// decode hands the record to the decoder, started at the first one (a
// batch holds n records).
func (s *datumSource[T]) decode(ld *datumLoad, e *encodedDatum, n int) {
	if s.decoder == nil {
		s.decoder = startLoaderPool(2 * n)
	}
	ld.decoding.Add(1)
	e.done = &ld.decoding
	s.decoder.add(e)
}

// run decodes the record and marks it done (loaderJob).
func (e *encodedDatum) run() {
	e.decode()
	e.done.Done()
}

// decode decodes the record into img, a panic included in err.
func (e *encodedDatum) decode() {
	defer func() {
		if r := recover(); r != nil {
			e.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	e.img, e.err = e.dec.Decode(e.encoded)
}

// pixelArithmetic lets the device finish the transformation (pixelStager).
func (s *datumSource[T]) pixelArithmetic() (data.PixelArithmetic[T], [3]int, bool) {
	a, ok := s.tf.PixelArithmetic()
	return a, s.item, ok
}

// staging reports whether the batch's items go to the device as windows.
func staging[T layer.Float](b *batch[T]) bool { return b.pix != nil && b.pix.used }

// unstage finishes on the host the items staged so far and stages no more
// of the batch: one of its items cannot be staged.
func (s *datumSource[T]) unstage(b *batch[T]) {
	if !staging(b) {
		return
	}
	b.pix.used = false
	dst := b.data.MutableCPUData()
	size := len(dst) / b.pix.items
	a, _ := s.tf.PixelArithmetic()
	c, h, w := b.pix.item[0], b.pix.item[1], b.pix.item[2]
	params := b.pix.params()
	for i := range b.pix.items {
		if b.pix.staged[i] {
			p := params[3*i : 3*i+3]
			a.ApplyWindow(b.pix.window(i), c, h, w, p[0] != 0, int(p[1]), int(p[2]), dst[i*size:(i+1)*size])
		}
	}
}

// setAside copies the encoded record under the cursor, item i of the
// batch, into the batch's next slot.
func (s *datumSource[T]) setAside(ld *datumLoad, i int) *encodedDatum {
	if ld.pending == len(ld.encoded) {
		ld.encoded = append(ld.encoded, &encodedDatum{})
	}
	e := ld.encoded[ld.pending]
	ld.pending++
	e.index, e.err = i, nil
	e.key = append(e.key[:0], s.cursor.Key()...)
	e.encoded = append(e.encoded[:0], s.rec.Data...)
	e.dec.Mode, e.dec.MaxPixels = s.tf.ColorMode(), s.tf.MaxImagePixels()
	return e
}

// transformEncoded decodes the set-aside records in parallel (or waits
// for decoding, which began as they were read) and transforms (or stages)
// them in order.
func (s *datumSource[T]) transformEncoded(b *batch[T], ld *datumLoad, size int) error {
	items := ld.encoded[:ld.pending]
	if len(items) == 0 { // raw records: keep the closures below from allocating
		return nil
	}
	item := batchItem(b)
	planned := false
	if ld.streamed {
		ld.decoding.Wait()
	} else {
		var err error
		planned, err = s.decodeOnDevice(b, items, size)
		if err != nil || (planned && b.pix.decoded != [2]int{}) {
			return err
		}
		inParallel(len(items), func(k int) error {
			items[k].decode()
			return nil
		}, func(k int, err error) { items[k].err = err })
	}
	// The random choices in the batch's order, then the pixel work (crop,
	// mirror, mean, scale: as long as the decoding) on all cores again.
	fits := true
	for _, e := range items {
		if e.err != nil {
			return s.keyError(e.key, fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(e.encoded), e.err))
		}
		if err := s.checkItem(&e.img, item); err != nil {
			return s.keyError(e.key, err)
		}
		if !planned {
			var err error
			if e.plan, err = s.tf.PlanImage(&e.img, size); err != nil {
				return s.keyError(e.key, err)
			}
		}
		fits = fits && e.plan.FitsWindow(&e.img)
	}
	if !fits { // the raw items staged so far go to the host, and these
		s.unstage(b)
	}
	if staging(b) {
		inParallel(len(items), func(k int) error {
			e := items[k]
			e.plan.Window(&e.img, b.pix.window(e.index))
			b.pix.place(e.index, e.plan)
			return nil
		}, func(k int, err error) { items[k].err = err })
		return nil
	}
	dst := b.data.MutableCPUData()
	inParallel(len(items), func(k int) error {
		e := items[k]
		s.tf.ApplyPlan(&e.img, e.plan, dst[e.index*size:(e.index+1)*size])
		return nil
	}, func(k int, err error) { items[k].err = err })
	for _, e := range items {
		if e.err != nil {
			return s.keyError(e.key, e.err)
		}
	}
	return nil
}

// decodeOnDevice plans a batch of encoded items and decodes them for the
// device (prefetch_jpeg.go) when the batch is all JPEGs of one size giving
// the batch's items: nvJPEG decodes the first share of the items while
// the host's cores decode the rest, whose images are then copied to the
// device next to nvJPEG's. planned reports that the items' plans are
// drawn: the host decodes the whole batch with them when the device did
// not take it (b.pix.decoded unset).
func (s *datumSource[T]) decodeOnDevice(b *batch[T], items []*encodedDatum, size int) (planned bool, err error) {
	if !staging(b) || b.pix.jpeg == nil || len(items) != b.pix.items {
		return false, nil
	}
	c, h, w, ok := s.jpegBatchShape(items, b.pix.item) // staging: the batch is the staging's shape
	if !ok {
		return false, nil
	}
	for _, e := range items {
		if e.plan, err = s.tf.PlanPixels(c, h, w, size); err != nil {
			return false, s.keyError(e.key, err)
		}
		b.pix.place(e.index, e.plan)
	}
	j := b.pix.jpeg
	if err := j.open(); err != nil {
		return false, fmt.Errorf("creating the JPEG decoders: %w", err)
	}
	if j.missing != nil {
		if !j.warned {
			j.warned = true
			logf.Warnf(s.log, "GOCAFFE_JPEG=nvjpeg, but JPEGs cannot be decoded on the GPU (%v): decoding them on the host", j.missing)
		}
		return false, nil
	}
	if err := j.reserve(len(items) * c * h * w); err != nil {
		return false, err
	}
	k := j.deviceShare(len(items))
	encoded := s.jpegs[:0]
	for _, e := range items[:k] {
		encoded = append(encoded, e.encoded)
	}
	s.jpegs = encoded
	var devErr error
	var devTime time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		devErr = j.decode(encoded, c, h, w)
		devTime = time.Since(start)
	})
	start := time.Now()
	hostErr := s.decodeForDevice(j, items[k:], k, c, h, w)
	hostTime := time.Since(start)
	wg.Wait()
	clear(s.jpegs) // hold no records past the batch
	switch {
	case hostErr != nil:
		return true, hostErr
	case devErr == nil:
		b.pix.decoded = [2]int{h, w}
		j.balance(k, len(items)-k, devTime, hostTime)
		return true, j.upload(k, len(items)-k, c*h*w)
	case errors.Is(devErr, errHostJPEG):
		logf.Debugf(s.log, "Decoding a batch on the host: %v", devErr)
		return true, nil
	}
	return true, devErr
}

// decodeForDevice decodes items (from position first of the batch) on
// the host's cores into j's pinned slots for the device.
func (s *datumSource[T]) decodeForDevice(j *jpegDevice, items []*encodedDatum, first, c, h, w int) error {
	if len(items) == 0 {
		return nil
	}
	slot := c * h * w
	host, err := j.hostSlots(len(items), slot)
	if err != nil {
		return err
	}
	inParallel(len(items), func(k int) (err error) {
		e := items[k]
		if e.img, err = e.dec.Decode(e.encoded); err != nil {
			return err
		}
		if e.img.Channels != c || e.img.Height != h || e.img.Width != w {
			return fmt.Errorf("the image decodes to %dx%dx%d, its header says %dx%dx%d", e.img.Channels, e.img.Height, e.img.Width, c, h, w)
		}
		copy(host[k*slot:(k+1)*slot], e.img.Data)
		return nil
	}, func(k int, err error) { items[k].err = err })
	for _, e := range items {
		if e.err != nil {
			return s.keyError(e.key, fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(e.encoded), e.err))
		}
	}
	return nil
}

// jpegBatchShape returns the channels, rows and columns of the items'
// JPEGs, and whether they are all JPEGs of one size, with as many
// components as the items have channels (nvJPEG's planar BGR, or luma),
// that give items of the batch's shape.
func (s *datumSource[T]) jpegBatchShape(items []*encodedDatum, item [3]int) (c, h, w int, ok bool) {
	c = item[0]
	for k, e := range items {
		iw, ih, comps, ok := data.JPEGFrame(e.encoded)
		if !ok || comps != c || (k > 0 && (ih != h || iw != w)) {
			return 0, 0, 0, false
		}
		h, w = ih, iw
	}
	if c != 1 && c != 3 {
		return 0, 0, 0, false
	}
	if mode := s.tf.ColorMode(); (mode == data.Color && c != 3) || (mode == data.Gray && c != 1) {
		return 0, 0, 0, false
	}
	oc, oh, ow, err := s.tf.ImageItemShape(c, h, w)
	return c, h, w, err == nil && [3]int{oc, oh, ow} == item
}

// readRaw transforms (or stages) the raw record under the cursor, item i
// of the batch, whose items are shaped item.
func (s *datumSource[T]) readRaw(b *batch[T], item [3]int, i, size int) error {
	if err := s.checkItem(&s.rec, item); err != nil {
		return s.recordError(err)
	}
	plan, err := s.tf.PlanRaw(&s.rec, size)
	if err != nil {
		return s.recordError(err)
	}
	if staging(b) && !plan.FitsWindow(&s.rec) {
		s.unstage(b)
	}
	if staging(b) {
		plan.Window(&s.rec, b.pix.window(i))
		b.pix.place(i, plan)
		return nil
	}
	s.tf.ApplyPlan(&s.rec, plan, b.data.MutableCPUData()[i*size:(i+1)*size])
	return nil
}

// checkItem checks that a raw or decoded record gives items of the
// batch's shape, item.
func (s *datumSource[T]) checkItem(r *data.DatumRecord, item [3]int) error {
	c, h, w, err := s.tf.ItemShape(r)
	if err != nil {
		return err
	}
	if [3]int{c, h, w} != item {
		return fmt.Errorf("datum of shape %dx%dx%d gives items of %dx%dx%d, the first record of its batch gives %dx%dx%d: the records of a batch must give the same",
			r.Channels, r.Height, r.Width, c, h, w, item[0], item[1], item[2])
	}
	return nil
}

// shapeBatch shapes the batch like the items of its first record, the
// one under the cursor, as Caffe's DataLayer::load_batch does: batches
// may differ in shape (records of several sizes with batch_size 1), the
// records of one batch may not. A batch whose items are not the staging's
// shape (prefetch_pixels.go) is transformed on the host.
func (s *datumSource[T]) shapeBatch(b *batch[T]) error {
	item, err := s.recordItemShape()
	if err != nil {
		return s.recordError(err)
	}
	if b.pix != nil && item != b.pix.item {
		b.pix.used = false // nothing is staged yet: the batch has just begun
	}
	return b.reshapeData([]int{b.data.Shape()[0], item[0], item[1], item[2]})
}

// recordItemShape returns the item shape of the record under the cursor:
// a raw record's from its fields, a JPEG's from its header (as it will
// decode in the transformer's colour mode), another encoded image's by
// decoding it.
func (s *datumSource[T]) recordItemShape() ([3]int, error) {
	if !s.rec.Encoded {
		c, h, w, err := s.tf.ItemShape(&s.rec)
		return [3]int{c, h, w}, err
	}
	if w, h, comps, ok := data.JPEGFrame(s.rec.Data); ok && (comps == 1 || comps == 3) {
		c := comps
		switch s.tf.ColorMode() {
		case data.Color:
			c = 3
		case data.Gray:
			c = 1
		}
		oc, oh, ow, err := s.tf.ImageItemShape(c, h, w)
		return [3]int{oc, oh, ow}, err
	}
	shape, err := s.tf.InferRecordShape(&s.rec)
	if err != nil {
		return [3]int{}, err
	}
	return [3]int{shape[1], shape[2], shape[3]}, nil
}

// skipOthers passes the records that other ranks of a data-parallel job
// read.
func (s *recordCursor) skipOthers() error {
	for s.ranks > 1 && s.position%s.ranks != s.rank {
		if err := s.next(); err != nil {
			return err
		}
	}
	return nil
}

// next moves to the next record, back to the first after the last.
func (s *recordCursor) next() error {
	s.position++
	if err := s.cursor.Next(); err != nil {
		return fmt.Errorf("database %s: %w", s.source, err)
	}
	if s.cursor.Valid() {
		return nil
	}
	logf.Debugf(s.log, "Restarting data prefetching from start.")
	if err := s.cursor.SeekToFirst(); err != nil {
		return fmt.Errorf("database %s: %w", s.source, err)
	}
	if !s.cursor.Valid() {
		return fmt.Errorf("database %s is empty", s.source)
	}
	return nil
}

func (s *recordCursor) recordError(err error) error { return s.keyError(s.cursor.Key(), err) }

func (s *recordCursor) keyError(key []byte, err error) error {
	return fmt.Errorf("database %s, record %q: %w", s.source, key, err)
}

// close stops the decoder, which first decodes what it was handed, and
// closes the database.
func (s *datumSource[T]) close() error {
	s.decoder.stop()
	s.decoder = nil
	return s.recordCursor.close()
}

func (s *recordCursor) close() error {
	return errors.Join(s.cursor.Close(), s.db.Close())
}
