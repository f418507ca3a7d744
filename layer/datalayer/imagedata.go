package datalayer

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "ImageData",
		New32: newImageData[float32], New64: newImageData[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newImageDataGPU[float32], newImageDataGPU[float64])},
		ONNX:     layer.ONNXInput,
		NoGolden: "it reads image files, which the golden nets do not",
	})
}

// ImageData reads image files listed in image_data_param.source, one
// `path label` line per image (the label after the last space), and
// produces batches of transformed images and their labels (Caffe's
// ImageDataLayer). Paths are prefixed with root_folder as written (give it
// a trailing slash). Images are decoded in colour (is_color, the default)
// or grayscale and, when new_height and new_width are set, resized to that
// size with bilinear interpolation. With shuffle the list is shuffled at
// the start and again at every epoch; rand_skip skips a random number of
// images in [0, rand_skip) at the start. As in Caffe, each batch takes
// the shape of its first image: images of several sizes pass one batch at
// a time (batch_size 1), while the images of one batch must agree.
//
// Loading runs ahead on a goroutine, as in the Data layer
// (data_param.prefetch batches, default 4), with its own generator for the
// shuffles, skip, crops and mirrors, seeded from the layer's at setup.
// Call Close to stop it.
type imageDataLayer[T layer.Float] struct {
	layer.Base[T]
	prefetching[T]
}

func newImageData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &imageDataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "ImageData".
func (*imageDataLayer[T]) Type() string { return "ImageData" }

// Counts returns no bottoms and two tops (data, labels).
func (*imageDataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(2)}
}

// LayerSetUp reads the list, shapes the tops from the first image and
// starts prefetching.
func (l *imageDataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.Close(); err != nil {
		return err
	}
	ip := l.Param().GetImageDataParam()
	batchSize := int(ip.GetBatchSize())
	if batchSize <= 0 {
		return errors.New("image_data_param.batch_size must be positive")
	}
	if (ip.GetNewHeight() == 0) != (ip.GetNewWidth() == 0) {
		return errors.New("image_data_param: new_height and new_width must be set together")
	}
	rng := l.RNG()
	tf, err := data.NewTransformer[T](l.Param().GetTransformParam(), l.Phase(), rng.Uint64())
	if err != nil {
		return err
	}
	tf.SetLogger(l.Logger())
	tf.SetMaxImagePixels(l.Context().Settings().MaxImagePixels)
	src, err := openImageSource(ip, tf, rng.Uint64(), l.Logger())
	if err != nil {
		return err
	}
	shape := []int{batchSize, src.item[0], src.item[1], src.item[2]}
	logf.Debugf(l.Logger(), "output data size: %d,%d,%d,%d", shape[0], shape[1], shape[2], shape[3])
	labelShape := []int{batchSize}
	if err := shapeDataTops(top, shape, labelShape); err != nil {
		return err
	}
	return startPrefetching(l, &l.prefetching, &l.Base, src, shape, labelShape)
}

// Reshape has nothing to do: Forward shapes the tops like the batch.
func (*imageDataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next prefetched batch into the tops.
func (l *imageDataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return l.forward(top) }

// BackwardCPU has nothing to do: data layers have no bottoms.
func (*imageDataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// imageSource reads the listed images for the prefetch goroutine.
type imageSource[T layer.Float] struct {
	list    string
	lines   []data.ImageListEntry
	pos     int
	shuffle bool
	rng     *rand.Rand
	reader  data.ImageReader
	tf      *data.Transformer[T]
	item    [3]int // channels, height, width of the first image's items (setup)
	loads   loadSlots[*batch[T], imageLoad]
	readers *loaderPool // started at the first batch
}

// imageLoad is a batch's images while it loads (one of two, loadSlots),
// kept with their buffers from batch to batch, and the wait for their
// reading.
type imageLoad struct {
	items   []*imageItem
	reading sync.WaitGroup
}

// openImageSource reads the list, shuffles it and skips as asked, and
// reads the item shape from the first image to be served.
func openImageSource[T layer.Float](ip *caffepb.ImageDataParameter, tf *data.Transformer[T], seed uint64, log *slog.Logger) (*imageSource[T], error) {
	lines, err := data.ReadImageList(ip.GetSource())
	if err != nil {
		return nil, fmt.Errorf("image_data_param.source: %w", err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("image list %s is empty", ip.GetSource())
	}
	// Paths with the root folder before them, once, rather than a string
	// joined per image per batch.
	for i := range lines {
		lines[i].Path = ip.GetRootFolder() + lines[i].Path
	}
	s := &imageSource[T]{
		list: ip.GetSource(), lines: lines, shuffle: ip.GetShuffle(),
		rng: mathfn.NewRNG(seed), tf: tf,
		reader: data.ImageReader{Mode: data.Gray, Height: int(ip.GetNewHeight()), Width: int(ip.GetNewWidth()), MaxPixels: tf.MaxImagePixels()},
	}
	if ip.GetIsColor() {
		s.reader.Mode = data.Color
	}
	if s.shuffle {
		logf.Debugf(log, "Shuffling data")
		s.shuffleLines()
	}
	logf.Debugf(log, "A total of %d images.", len(lines))
	if skip := ip.GetRandSkip(); skip > 0 {
		s.pos = s.rng.IntN(int(skip))
		logf.Debugf(log, "Skipping first %d data points.", s.pos)
		if s.pos >= len(lines) {
			return nil, fmt.Errorf("image list %s: not enough images (%d) to skip %d", s.list, len(lines), s.pos)
		}
	}
	rec, err := s.read(s.lines[s.pos])
	if err != nil {
		return nil, err
	}
	c, h, w, err := tf.ItemShape(&rec)
	if err != nil {
		return nil, s.imageError(s.lines[s.pos], err)
	}
	s.item = [3]int{c, h, w}
	return s, nil
}

func (s *imageSource[T]) shuffleLines() {
	s.rng.Shuffle(len(s.lines), func(i, j int) { s.lines[i], s.lines[j] = s.lines[j], s.lines[i] })
}

// read decodes one listed image; errors name the image and the list line.
func (s *imageSource[T]) read(l data.ImageListEntry) (data.DatumRecord, error) {
	rec, err := s.reader.Read(l.Path)
	if err != nil {
		return rec, fmt.Errorf("image list %s, line %d: %w", s.list, l.Line, err)
	}
	return rec, nil
}

func (s *imageSource[T]) imageError(l data.ImageListEntry, err error) error {
	return fmt.Errorf("image list %s, line %d, image %s: %w", s.list, l.Line, l.Path, err)
}

// load fills a batch with the next images (Caffe's load_batch): begin,
// then finish.
func (s *imageSource[T]) load(b *batch[T]) error {
	if err := s.begin(b, nil); err != nil {
		return err
	}
	return s.finish(b)
}

// begin takes the list's next entries in order and hands their files to
// the readers, which read and decode them on all cores (splitLoader). It
// draws nothing from the transformer's generator (the shuffles have their
// own), so it has nothing to flush first.
func (s *imageSource[T]) begin(b *batch[T], _ func() error) error {
	labels := b.label.MutableCPUData()
	n := b.data.Shape()[0]
	ld := s.loads.take(b)
	for len(ld.items) < n { // readers of the source's settings, buffers of their own
		r := data.ImageReader{Mode: s.reader.Mode, Height: s.reader.Height, Width: s.reader.Width, MaxPixels: s.reader.MaxPixels}
		ld.items = append(ld.items, &imageItem{reader: r, list: s.list, done: &ld.reading})
	}
	if s.readers == nil {
		s.readers = startLoaderPool(2 * n)
	}
	for i, it := range ld.items[:n] {
		it.line, it.err = s.lines[s.pos], nil
		labels[i] = T(it.line.Label)
		if s.pos++; s.pos == len(s.lines) {
			s.pos = 0
			if s.shuffle {
				s.shuffleLines()
			}
		}
		ld.reading.Add(1)
		s.readers.add(it)
	}
	return nil
}

// finish waits for the batch's images, draws each item's random choices in
// the batch's order (so that a seed gives the same batches), then
// transforms them on all cores again (splitLoader).
func (s *imageSource[T]) finish(b *batch[T]) error {
	n := b.data.Shape()[0]
	ld := s.loads.of(b)
	ld.reading.Wait()
	items := ld.items[:n]
	for _, it := range items {
		if it.err != nil {
			return it.err
		}
	}
	if err := s.shapeBatch(b, items[0]); err != nil {
		return err
	}
	item := batchItem(b)
	dst := b.data.MutableCPUData()
	size := len(dst) / n
	for _, it := range items {
		if err := s.checkItem(it, item); err != nil {
			return err
		}
		var err error
		if it.plan, err = s.tf.PlanImage(&it.rec, size); err != nil {
			return s.imageError(it.line, err)
		}
	}
	inParallel(n, func(k int) error {
		s.tf.ApplyPlan(&items[k].rec, items[k].plan, dst[k*size:(k+1)*size])
		return nil
	}, func(k int, err error) { items[k].err = err })
	for _, it := range items {
		if it.err != nil {
			return s.imageError(it.line, it.err)
		}
	}
	return nil
}

// imageItem is one image of a batch being loaded, with a reader of its own
// (readers keep buffers) so that images decode in parallel.
type imageItem struct {
	line   data.ImageListEntry // its path with the root folder before it
	list   string
	reader data.ImageReader
	rec    data.DatumRecord
	plan   data.TransformPlan
	err    error
	done   *sync.WaitGroup // its batch's reading
}

// run reads and decodes the image, a panic included in err, and marks it
// done (loaderJob).
func (it *imageItem) run() {
	defer it.done.Done()
	defer func() {
		if r := recover(); r != nil {
			it.err = fmt.Errorf("image list %s, line %d: panic: %v\n%s", it.list, it.line.Line, r, debug.Stack())
		}
	}()
	var err error
	if it.rec, err = it.reader.Read(it.line.Path); err != nil {
		it.err = fmt.Errorf("image list %s, line %d: %w", it.list, it.line.Line, err)
	}
}

// shapeBatch shapes the batch's data like the items of its first image, as
// Caffe's ImageDataLayer::load_batch does: batches may differ in shape
// (images of several sizes with batch_size 1), the images of one batch may
// not.
func (s *imageSource[T]) shapeBatch(b *batch[T], first *imageItem) error {
	c, h, w, err := s.tf.ItemShape(&first.rec)
	if err != nil {
		return s.imageError(first.line, err)
	}
	return b.reshapeData([]int{b.data.Shape()[0], c, h, w})
}

// checkItem checks that the image gives items of the batch's shape, item
// (its first image's).
func (s *imageSource[T]) checkItem(it *imageItem, item [3]int) error {
	c, h, w, err := s.tf.ItemShape(&it.rec)
	if err != nil {
		return s.imageError(it.line, err)
	}
	if [3]int{c, h, w} != item {
		return s.imageError(it.line, fmt.Errorf("image of %dx%dx%d gives items of %dx%dx%d, the first image of its batch gives %dx%dx%d: set new_height and new_width, or crop_size, to make them equal",
			it.rec.Channels, it.rec.Height, it.rec.Width, c, h, w, item[0], item[1], item[2]))
	}
	return nil
}

// close stops the readers, which first read what they were handed.
func (s *imageSource[T]) close() error {
	s.readers.stop()
	s.readers = nil
	return nil
}
