package datalayer

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "VideoData",
		New32: newVideoData[float32], New64: newVideoData[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newVideoDataGPU[float32], newVideoDataGPU[float64])},
		ONNX:     layer.ONNXInput,
		NoGolden: "BVLC Caffe has no such layer: it is TSN's (yjxiong/caffe)",
	})
}

// VideoData is the data layer of Temporal Segment Networks (TSN,
// yjxiong/caffe): video_data_param.source lists videos as "<frame folder>
// <number of frames> <label>" lines; each video is split into num_segments
// equal segments and new_length consecutive frames are read from each (at
// a random place in TRAIN, the middle in TEST), from files named by
// name_pattern ("image_%04d.jpg" for RGB, "flow_%c_%04d.jpg" with x and y
// for FLOW, numbered from 1), resized to new_height x new_width when they
// are set, and stacked into one image of segments x length x channels
// planes (3, or 1 with grayscale, for RGB; the x and y flow planes for
// FLOW). transform_param then applies, TSN's options included (see
// data.Transformer). Top 0: batch_size stacks; top 1: their labels.
//
// With shuffle the list is shuffled at the start and after each pass.
// Frames are decoded on all cores, a batch ahead of the net as Data's
// prefetching does. A frame that cannot be read is an error naming the
// file and the list line (TSN skips the video without advancing, which
// retries it forever).
//
// NVCaffe's VideoData (video_type, video_file: frames from a camera or a
// video file through OpenCV) is not implemented.
type videoDataLayer[T layer.Float] struct {
	layer.Base[T]
	prefetching[T]
}

func newVideoData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &videoDataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "VideoData".
func (*videoDataLayer[T]) Type() string { return "VideoData" }

// Counts returns no bottoms and the data and label tops.
func (*videoDataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Between(1, 2)}
}

// LayerSetUp reads the list, shapes the tops from the first video and
// starts prefetching.
func (l *videoDataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.Close(); err != nil {
		return err
	}
	vp := l.Param().GetVideoDataParam()
	if vp.VideoType != nil || vp.GetVideoFile() != "" {
		return errors.New("video_data_param: NVCaffe's camera and video-file VideoData (video_type, video_file) is not implemented; gocaffe's VideoData is TSN's, reading frame folders listed in source")
	}
	batchSize := int(vp.GetBatchSize())
	if batchSize <= 0 {
		return errors.New("video_data_param.batch_size must be positive")
	}
	rng := l.RNG()
	tf, err := data.NewTransformer[T](l.Param().GetTransformParam(), l.Phase(), rng.Uint64())
	if err != nil {
		return err
	}
	tf.SetLogger(l.Logger())
	tf.SetMaxImagePixels(l.Context().Settings().MaxImagePixels)
	src, err := openVideoSource(vp, tf, l.Phase(), rng.Uint64(), l.Logger())
	if err != nil {
		return err
	}
	shape := []int{batchSize, src.item[0], src.item[1], src.item[2]}
	logf.Debugf(l.Logger(), "output data size: %d,%d,%d,%d", shape[0], shape[1], shape[2], shape[3])
	var labelShape []int
	if len(top) > 1 {
		labelShape = []int{batchSize, 1, 1, 1}
	}
	if err := shapeDataTops(top, shape, labelShape); err != nil {
		return err
	}
	return startPrefetching(l, &l.prefetching, &l.Base, src, shape, labelShape)
}

// Reshape has nothing to do: Forward shapes the tops like the batch.
func (*videoDataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next prefetched batch into the tops.
func (l *videoDataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return l.forward(top) }

// BackwardCPU has nothing to do: data layers have no bottoms.
func (*videoDataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// videoLine is one listed video.
type videoLine struct {
	dir           string
	frames, label int
	line          int
}

// readVideoList reads "<folder> <frames> <label>" lines.
func readVideoList(path string) ([]videoLine, error) {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, fmt.Errorf("video_data_param.source: %w", err)
	}
	defer f.Close()
	var out []videoLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		bad := func() error {
			return fmt.Errorf("%s:%d: want \"<frame folder> <number of frames> <label>\", got %q", path, n, sc.Text())
		}
		if len(fields) != 3 {
			return nil, bad()
		}
		frames, err1 := strconv.Atoi(fields[1])
		label, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil || frames < 0 {
			return nil, bad()
		}
		out = append(out, videoLine{dir: fields[0], frames: frames, label: label, line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("video list %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("video list %s is empty", path)
	}
	return out, nil
}

// videoSource reads the listed videos' frames for the prefetch goroutine.
type videoSource[T layer.Float] struct {
	list             string
	lines            []videoLine
	pos              int
	shuffle, flow    bool
	segments, length int
	pattern          string
	mode             data.ColorMode
	height, width    int
	train            bool
	rng              *rand.Rand
	tf               *data.Transformer[T]
	item             [3]int
	items            []*videoItem
	frames           []videoFrame // the batch's frames, reused
}

// videoFrame is frame k of item item of the batch being loaded.
type videoFrame struct{ item, k int }

// videoItem is one video of the batch being loaded: its frames, read on
// several goroutines with readers of their own, and the stack they make.
type videoItem struct {
	video   videoLine
	paths   []string
	frames  []data.DatumRecord
	errs    []error // per frame: frames are read concurrently
	readers []data.ImageReader
	stack   []byte
	rec     data.DatumRecord
	plan    data.TransformPlan
	err     error
}

func openVideoSource[T layer.Float](vp *caffepb.VideoDataParameter, tf *data.Transformer[T], phase caffepb.Phase, seed uint64, log *slog.Logger) (*videoSource[T], error) {
	lines, err := readVideoList(vp.GetSource())
	if err != nil {
		return nil, err
	}
	s := &videoSource[T]{
		list: vp.GetSource(), lines: lines, shuffle: vp.GetShuffle(), flow: vp.GetModality() == caffepb.VideoDataParameter_FLOW,
		segments: int(vp.GetNumSegments()), length: int(vp.GetNewLength()), pattern: vp.GetNamePattern(),
		mode: data.Color, height: int(vp.GetNewHeight()), width: int(vp.GetNewWidth()),
		train: phase == caffepb.Phase_TRAIN, rng: mathfn.NewRNG(seed), tf: tf,
	}
	if s.segments <= 0 || s.length <= 0 {
		return nil, fmt.Errorf("video_data_param: num_segments %d and new_length %d must be positive", s.segments, s.length)
	}
	if err := s.checkPattern(); err != nil {
		return nil, err
	}
	if s.flow || vp.GetGrayscale() {
		s.mode = data.Gray
	}
	if s.shuffle {
		s.shuffleLines()
	}
	logf.Debugf(log, "A total of %d videos.", len(lines))
	first := &videoItem{}
	if err := s.readVideo(first, s.lines[0]); err != nil {
		return nil, err
	}
	c, h, w, err := tf.ItemShape(&first.rec)
	if err != nil {
		return nil, s.videoError(first.video, err)
	}
	s.item = [3]int{c, h, w}
	return s, nil
}

// checkPattern sets the default name pattern and checks that it takes a
// frame number (and, for flow, the x or y before it).
func (s *videoSource[T]) checkPattern() error {
	want := 1
	if s.flow {
		want = 2
	}
	if s.pattern == "" {
		s.pattern = "image_%04d.jpg"
		if s.flow {
			s.pattern = "flow_%c_%04d.jpg"
		}
	}
	if n := strings.Count(s.pattern, "%") - 2*strings.Count(s.pattern, "%%"); n != want {
		return fmt.Errorf("video_data_param.name_pattern %q: want %d printf verb(s) (a frame number%s)", s.pattern, want, map[bool]string{true: " after %c for x or y", false: ""}[s.flow])
	}
	return nil
}

func (s *videoSource[T]) shuffleLines() {
	s.rng.Shuffle(len(s.lines), func(i, j int) { s.lines[i], s.lines[j] = s.lines[j], s.lines[i] })
}

func (s *videoSource[T]) videoError(v videoLine, err error) error {
	return fmt.Errorf("video list %s, line %d (%s): %w", s.list, v.line, v.dir, err)
}

// offsets are the first frames (0-based) of each segment's run: TSN's
// random place in TRAIN, the middle in TEST, 0 when a segment is shorter
// than the run.
func (s *videoSource[T]) offsets(v videoLine, out []int) []int {
	out = out[:0]
	avg := v.frames / s.segments
	for i := range s.segments {
		switch {
		case avg < s.length:
			out = append(out, 0)
		case s.train:
			out = append(out, s.rng.IntN(avg-s.length+1)+i*avg)
		default:
			out = append(out, (avg-s.length+1)/2+i*avg)
		}
	}
	return out
}

// framePaths lists the files a video's offsets read, in stacking order.
func (s *videoSource[T]) framePaths(v videoLine, offsets []int, out []string) []string {
	out = out[:0]
	for _, off := range offsets {
		for f := 1; f <= s.length; f++ {
			if s.flow {
				out = append(out, v.dir+"/"+fmt.Sprintf(s.pattern, 'x', f+off), v.dir+"/"+fmt.Sprintf(s.pattern, 'y', f+off))
			} else {
				out = append(out, v.dir+"/"+fmt.Sprintf(s.pattern, f+off))
			}
		}
	}
	return out
}

// readVideo reads one video's frames (in parallel) and stacks them.
func (s *videoSource[T]) readVideo(it *videoItem, v videoLine) error {
	s.plan(it, v)
	inParallel(len(it.paths), func(k int) (err error) {
		it.frames[k], err = it.readers[k].Read(it.paths[k])
		return err
	}, func(k int, err error) { it.errs[k] = err })
	return s.stack(it)
}

// plan draws a video's offsets and sets up its frame readers.
func (s *videoSource[T]) plan(it *videoItem, v videoLine) {
	it.video, it.err = v, nil // err: the transform's panic, recovered
	var offs [64]int
	it.paths = s.framePaths(v, s.offsets(v, offs[:0]), it.paths)
	for len(it.readers) < len(it.paths) {
		it.readers = append(it.readers, data.ImageReader{Mode: s.mode, Height: s.height, Width: s.width, MaxPixels: s.tf.MaxImagePixels()})
	}
	it.frames = kit.Grow(it.frames, len(it.paths))
	it.errs = kit.Grow(it.errs, len(it.paths))
	clear(it.errs)
}

// stack joins the frames' planes into one raw record.
func (s *videoSource[T]) stack(it *videoItem) error {
	if err := errors.Join(it.errs...); err != nil {
		return s.videoError(it.video, err)
	}
	f0 := it.frames[0]
	it.stack = it.stack[:0]
	channels := 0
	for k, f := range it.frames {
		if f.Height != f0.Height || f.Width != f0.Width || f.Channels != f0.Channels {
			return s.videoError(it.video, fmt.Errorf("frame %s is %dx%dx%d, %s is %dx%dx%d: set new_height and new_width to make them equal",
				it.paths[k], f.Channels, f.Height, f.Width, it.paths[0], f0.Channels, f0.Height, f0.Width))
		}
		it.stack = append(it.stack, f.Data...)
		channels += f.Channels
	}
	it.rec = data.DatumRecord{Channels: channels, Height: f0.Height, Width: f0.Width, Data: it.stack, Label: int32(it.video.label)}
	return nil
}

// load fills a batch with the next videos: the frames of all of them read
// on all cores, each video's crop and mirror drawn in the batch's order,
// then the transforms on all cores again.
func (s *videoSource[T]) load(b *batch[T]) error {
	dst := b.data.MutableCPUData()
	n := b.data.Shape()[0]
	size := len(dst) / n
	for len(s.items) < n {
		s.items = append(s.items, &videoItem{})
	}
	items := s.items[:n]
	frames := s.frames[:0]
	for i, it := range items {
		s.plan(it, s.lines[s.pos])
		for k := range it.paths {
			frames = append(frames, videoFrame{i, k})
		}
		if s.pos++; s.pos == len(s.lines) {
			s.pos = 0
			if s.shuffle {
				s.shuffleLines()
			}
		}
	}
	inParallel(len(frames), func(j int) (err error) {
		it, k := items[frames[j].item], frames[j].k
		it.frames[k], err = it.readers[k].Read(it.paths[k])
		return err
	}, func(j int, err error) { items[frames[j].item].errs[frames[j].k] = err })
	s.frames = frames
	for _, it := range items {
		if err := s.stack(it); err != nil {
			return err
		}
		c, h, w, err := s.tf.ItemShape(&it.rec)
		if err != nil {
			return s.videoError(it.video, err)
		}
		if [3]int{c, h, w} != s.item {
			return s.videoError(it.video, fmt.Errorf("the stack of %dx%dx%d gives items of %dx%dx%d, the first video's give %dx%dx%d: set new_height and new_width to make them equal",
				it.rec.Channels, it.rec.Height, it.rec.Width, c, h, w, s.item[0], s.item[1], s.item[2]))
		}
		if it.plan, err = s.tf.PlanImage(&it.rec, size); err != nil {
			return s.videoError(it.video, err)
		}
	}
	inParallel(n, func(k int) error {
		s.tf.ApplyPlan(&items[k].rec, items[k].plan, dst[k*size:(k+1)*size])
		return nil
	}, func(k int, err error) { items[k].err = err })
	for _, it := range items {
		if it.err != nil {
			return s.videoError(it.video, it.err)
		}
	}
	if b.label != nil {
		labels := b.label.MutableCPUData()
		for i, it := range items {
			labels[i] = T(it.video.label)
		}
	}
	return nil
}

func (s *videoSource[T]) close() error { return nil }
