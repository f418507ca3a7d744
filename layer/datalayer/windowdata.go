package datalayer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "WindowData",
		New32: newWindowData[float32], New64: newWindowData[float64],
		ONNX:     layer.ONNXInput,
		NoGolden: "it reads image files and a window list, which the golden nets do not",
	})
}

// WindowData serves crops of image windows for detection fine-tuning
// (Caffe's WindowDataLayer, R-CNN style). window_data_param.source is a
// window file of records
//
//	# image_index
//	image_path
//	channels height width
//	num_windows
//	class_index overlap x1 y1 x2 y2     (num_windows lines)
//
// Windows overlapping their object by at least fg_threshold (default 0.5)
// are foreground (their class must be positive), those below bg_threshold
// (default 0.5) background (class 0); the others are not used. Each batch
// holds batch_size * fg_fraction (default 0.25) random foreground windows
// and random background windows for the rest, each cut from its image
// (widened by context_pad pixels of context, and made square with
// crop_mode "square"; the default "warp" stretches), resized to
// transform_param.crop_size, mirrored at random with transform_param.mirror,
// less transform_param's mean_file or mean_value, times
// window_data_param.scale. Image paths are prefixed with root_folder; with
// cache_images the image files are kept in memory.
//
// Unlike Caffe's, the batch is loaded in the forward pass, not prefetched
// by a thread.
type windowDataLayer[T layer.Float] struct {
	layer.Base[T]
	images     []windowImage
	fg, bg     []window
	channels   int
	crop       int
	mean       []T // mean file data
	meanH      int
	meanW      int
	meanValues []T
	reader     data.ImageReader
	resizer    data.Resizer
	roi, out   []byte
}

type windowImage struct {
	path    string
	encoded []byte // the file, with cache_images
}

type window struct {
	image          int
	label          int
	x1, y1, x2, y2 int
}

func newWindowData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &windowDataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.crop = int(p.GetTransformParam().GetCropSize())
	if l.crop <= 0 {
		return nil, errors.New("WindowData needs transform_param.crop_size > 0")
	}
	if p.GetWindowDataParam().GetBatchSize() == 0 {
		return nil, errors.New("window_data_param.batch_size must be positive")
	}
	return l, nil
}

// Type returns "WindowData".
func (*windowDataLayer[T]) Type() string { return "WindowData" }

// Counts returns no bottoms; data and labels out.
func (*windowDataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(2)}
}

// LayerSetUp reads the window file and the mean, and shapes the tops.
func (l *windowDataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	wp := l.Param().GetWindowDataParam()
	if err := l.readWindowFile(wp.GetSource()); err != nil {
		return err
	}
	if len(l.fg) == 0 || len(l.bg) == 0 {
		return fmt.Errorf("%s: needs foreground and background windows, found %d and %d (fg_threshold %v, bg_threshold %v)",
			wp.GetSource(), len(l.fg), len(l.bg), wp.GetFgThreshold(), wp.GetBgThreshold())
	}
	logf.Debugf(l.Logger(), "Window data: %d images, %d foreground and %d background windows", len(l.images), len(l.fg), len(l.bg))
	if err := l.readMean(); err != nil {
		return err
	}
	batch := int(wp.GetBatchSize())
	if err := top[0].Reshape([]int{batch, l.channels, l.crop, l.crop}); err != nil {
		return err
	}
	return top[1].Reshape([]int{batch})
}

// readWindowFile parses the window file.
func (l *windowDataLayer[T]) readWindowFile(source string) error {
	text, err := fileio.ReadFile(source, fileio.NoLimit)
	if err != nil {
		return fmt.Errorf("failed to open window file: %w", err)
	}
	wp := l.Param().GetWindowDataParam()
	tok := strings.Fields(string(text))
	if len(tok) == 0 {
		return fmt.Errorf("window file %s is empty", source)
	}
	pos := 0
	next := func(what string) (string, error) {
		if pos >= len(tok) {
			return "", fmt.Errorf("window file %s: ends where %s was expected", source, what)
		}
		pos++
		return tok[pos-1], nil
	}
	nextInt := func(what string) (int, error) {
		s, err := next(what)
		if err != nil {
			return 0, err
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("window file %s: %s %q is not an integer", source, what, s)
		}
		return v, nil
	}
	l.images, l.fg, l.bg = nil, nil, nil
	for pos < len(tok) {
		if hash, _ := next("#"); hash != "#" {
			return fmt.Errorf("window file %s: expected '#' at the start of an image record, got %q", source, hash)
		}
		var vals [5]int
		path, err := "", error(nil)
		if vals[0], err = nextInt("image index"); err != nil {
			return err
		}
		if path, err = next("image path"); err != nil {
			return err
		}
		for i, what := range []string{"channels", "height", "width", "number of windows"} {
			if vals[i+1], err = nextInt(what); err != nil {
				return err
			}
		}
		img := windowImage{path: wp.GetRootFolder() + path}
		if wp.GetCacheImages() {
			if img.encoded, err = fileio.ReadFile(img.path, fileio.ProtoLimit); err != nil {
				return fmt.Errorf("could not open or find file %s: %w", img.path, err)
			}
		}
		index := len(l.images)
		l.images = append(l.images, img)
		l.channels = vals[1]
		for range vals[4] {
			if err := l.readWindow(source, index, nextInt, next); err != nil {
				return err
			}
		}
	}
	return nil
}

// readWindow reads one window line and files it as foreground or
// background.
func (l *windowDataLayer[T]) readWindow(source string, image int, nextInt func(string) (int, error), next func(string) (string, error)) error {
	wp := l.Param().GetWindowDataParam()
	label, err := nextInt("class index")
	if err != nil {
		return err
	}
	s, err := next("overlap")
	if err != nil {
		return err
	}
	overlap, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return fmt.Errorf("window file %s: overlap %q is not a number", source, s)
	}
	w := window{image: image, label: label}
	for _, c := range []*int{&w.x1, &w.y1, &w.x2, &w.y2} {
		if *c, err = nextInt("window coordinate"); err != nil {
			return err
		}
	}
	switch {
	case float32(overlap) >= wp.GetFgThreshold():
		if label <= 0 {
			return fmt.Errorf("window file %s: foreground window of image %s has class %d; foreground classes must be positive", source, l.images[image].path, label)
		}
		l.fg = append(l.fg, w)
	case float32(overlap) < wp.GetBgThreshold():
		w.label = 0
		l.bg = append(l.bg, w)
	}
	return nil
}

// readMean loads transform_param's mean file or mean values.
func (l *windowDataLayer[T]) readMean() error {
	tp := l.Param().GetTransformParam()
	if tp.MeanFile != nil && len(tp.GetMeanValue()) > 0 {
		return errors.New("cannot specify mean_file and mean_value at the same time")
	}
	if tp.MeanFile != nil {
		var bp caffepb.BlobProto
		if err := protoio.ReadProtoFromBinaryFile(tp.GetMeanFile(), &bp); err != nil {
			return err
		}
		m, err := blob.New[T]()
		if err != nil {
			return err
		}
		if err := m.FromProto(&bp, true); err != nil {
			return fmt.Errorf("%s: %w", tp.GetMeanFile(), err)
		}
		h, _ := m.LegacyShape(2)
		w, _ := m.LegacyShape(3)
		if h < l.crop || w < l.crop {
			return fmt.Errorf("%s: mean of %dx%d is smaller than crop_size %d", tp.GetMeanFile(), h, w, l.crop)
		}
		l.mean, l.meanH, l.meanW = m.CPUData(), h, w
	}
	l.meanValues = l.meanValues[:0]
	for _, v := range tp.GetMeanValue() {
		l.meanValues = append(l.meanValues, T(v))
	}
	if n := len(l.meanValues); n > 1 && n < l.channels {
		return fmt.Errorf("transform_param.mean_value has %d values for %d channels", n, l.channels)
	}
	return nil
}

// Reshape does nothing: the tops keep the shape LayerSetUp gave them.
func (*windowDataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU loads a batch: background windows first, then foreground.
func (l *windowDataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	wp := l.Param().GetWindowDataParam()
	batch := int(wp.GetBatchSize())
	numFG := int(float32(batch) * wp.GetFgFraction())
	x, labels := top[0].MutableCPUData(), top[1].MutableCPUData()
	clear(x)
	item := 0
	for isFG, count := range []int{batch - numFG, numFG} {
		for range count {
			var w window
			if isFG == 1 {
				w = l.fg[l.RNG().Uint32()%uint32(len(l.fg))]
			} else {
				w = l.bg[l.RNG().Uint32()%uint32(len(l.bg))]
			}
			mirror := l.Param().GetTransformParam().GetMirror() && l.RNG().Uint32()%2 == 1
			if err := l.loadWindow(w, mirror, x[item*l.channels*l.crop*l.crop:(item+1)*l.channels*l.crop*l.crop]); err != nil {
				return err
			}
			labels[item] = T(w.label)
			item++
		}
	}
	return nil
}

// loadWindow cuts, resizes, mirrors and normalises one window into dst
// (channels x crop x crop), as Caffe's WindowDataLayer::load_batch.
func (l *windowDataLayer[T]) loadWindow(w window, mirror bool, dst []T) error {
	img := l.images[w.image]
	var rec data.DatumRecord
	var err error
	l.reader.Mode, l.reader.MaxPixels = data.Color, l.Context().Settings().MaxImagePixels
	if img.encoded != nil {
		rec, err = l.reader.Decode(img.encoded)
	} else {
		rec, err = l.reader.Read(img.path)
	}
	if err != nil {
		return fmt.Errorf("could not open or find file %s: %w", img.path, err)
	}
	if rec.Channels != l.channels {
		return fmt.Errorf("image %s has %d channels, the window file says %d", img.path, rec.Channels, l.channels)
	}
	wp := l.Param().GetWindowDataParam()
	crop := l.crop
	x1, y1, x2, y2 := w.x1, w.y1, w.x2, w.y2
	outW, outH, padW, padH := crop, crop, 0, 0
	contextPad := int(wp.GetContextPad())
	if contextPad > 0 || wp.GetCropMode() == "square" {
		contextScale := T(crop) / T(crop-2*contextPad)
		halfH, halfW := T(y2-y1+1)/2, T(x2-x1+1)/2
		cx, cy := T(x1)+halfW, T(y1)+halfH
		if wp.GetCropMode() == "square" {
			halfH = max(halfH, halfW)
			halfW = halfH
		}
		x1, x2 = roundInt(cx-halfW*contextScale), roundInt(cx+halfW*contextScale)
		y1, y2 = roundInt(cy-halfH*contextScale), roundInt(cy+halfH*contextScale)
		unclippedH, unclippedW := y2-y1+1, x2-x1+1
		padX1, padY1 := max(0, -x1), max(0, -y1)
		padX2, padY2 := max(0, x2-rec.Width+1), max(0, y2-rec.Height+1)
		x1, x2, y1, y2 = x1+padX1, x2-padX2, y1+padY1, y2-padY2
		scaleX, scaleY := T(crop)/T(unclippedW), T(crop)/T(unclippedH)
		outW, outH = roundInt(T(x2-x1+1)*scaleX), roundInt(T(y2-y1+1)*scaleY)
		padX1, padX2 = roundInt(T(padX1)*scaleX), roundInt(T(padX2)*scaleX)
		padH = roundInt(T(padY1) * scaleY)
		padW = padX1
		if mirror {
			padW = padX2
		}
		outH, outW = min(outH, crop-padH), min(outW, crop-padW)
	}
	if x1 < 0 || y1 < 0 || x2 >= rec.Width || y2 >= rec.Height || x2 < x1 || y2 < y1 || outW <= 0 || outH <= 0 {
		return fmt.Errorf("window (%d, %d, %d, %d) of image %s does not lie inside its %dx%d pixels", w.x1, w.y1, w.x2, w.y2, img.path, rec.Width, rec.Height)
	}
	// The window's pixels, channel-major, then resized.
	rw, rh, c := x2-x1+1, y2-y1+1, rec.Channels
	if cap(l.roi) < c*rw*rh {
		l.roi = make([]byte, c*rw*rh)
	}
	roi := l.roi[:c*rw*rh]
	for ch := range c {
		for y := range rh {
			src := rec.Data[(ch*rec.Height+y1+y)*rec.Width+x1:]
			copy(roi[(ch*rh+y)*rw:(ch*rh+y+1)*rw], src[:rw])
		}
	}
	out, err := l.resizer.Resize(l.out, roi, c, rh, rw, outH, outW)
	if err != nil {
		return err
	}
	l.out = out
	scale := T(wp.GetScale())
	moff := (l.meanW - crop) / 2
	for ch := range c {
		for h := range outH {
			for x := range outW {
				sx := x
				if mirror {
					sx = outW - 1 - x
				}
				pixel := T(out[(ch*outH+h)*outW+sx])
				switch {
				case l.mean != nil:
					pixel -= l.mean[(ch*l.meanH+h+moff+padH)*l.meanW+x+moff+padW]
				case len(l.meanValues) == 1:
					pixel -= l.meanValues[0]
				case len(l.meanValues) > 1:
					pixel -= l.meanValues[ch]
				}
				dst[(ch*crop+h+padH)*crop+x+padW] = pixel * scale
			}
		}
	}
	return nil
}

// roundInt rounds half away from zero, as C's round.
func roundInt[T layer.Float](v T) int { return int(math.Round(float64(v))) }

// BackwardCPU does nothing: data layers take no gradient.
func (*windowDataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
