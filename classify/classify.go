// Package classify serves a trained Caffe model: a Classifier loads a
// deploy net and its weights once and turns images into class
// probabilities, with the preprocessing Caffe's Data layer and Python
// Classifier apply (resize, center crop or ten-crop oversampling, mean file
// or mean values, scale), so a Go service can answer what `caffe` and
// pycaffe would.
package classify

import (
	"errors"
	"fmt"
	"image"
	"log/slog"
	"slices"
	"sort"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// Options says how images are prepared for the net.
type Options struct {
	// Context is the device the net runs on; nil runs it on the CPU.
	Context *device.Context
	// ResizeHeight and ResizeWidth resize every image first (bilinear, as
	// OpenCV's INTER_LINEAR); zero resizes to the net's input size, so
	// nothing is cropped.
	ResizeHeight, ResizeWidth int
	// Oversample classifies ten crops (the four corners and the center,
	// and their mirror images) and averages them, as Caffe's Python
	// Classifier; otherwise the center crop alone.
	Oversample bool
	// MeanFile is a .binaryproto mean image of the resized size (what
	// compute_image_mean writes); MeanValues one value per channel (or one
	// for all). At most one of the two.
	MeanFile   string
	MeanValues []float32
	// Scale multiplies the pixels after the mean is subtracted, as
	// transform_param's scale; zero means 1.
	Scale float32
	// Labels names the classes (synset_words.txt's lines), optional.
	Labels []string
	// Logger receives the net's log lines; nil is slog.Default().
	Logger *slog.Logger
}

// Prediction is one class of an image's result.
type Prediction struct {
	Class       int
	Label       string // Options.Labels[Class], if given
	Probability float32
}

// Classifier runs a deploy net on images. It is not safe for concurrent
// use; a service keeps one per goroutine or guards it.
type Classifier struct {
	net         *net.Net[float32]
	input       *blob.Blob[float32]
	output      *blob.Blob[float32]
	c, h, w     int // the net's input item
	rh, rw      int // the resized image
	opts        Options
	mean        []float32 // C x rh x rw, nil without a mean file
	pix, resize []byte
	rs          data.Resizer
}

// New builds the deploy net model (TEST phase), loads weights and checks
// the options against the net's input, which must be an Input layer of
// shape N x C x H x W with C 1 (gray) or 3 (B, G, R, as Caffe's OpenCV).
func New(model, weights string, opts Options) (*Classifier, error) {
	n, err := net.NewFromFile[float32](model, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Context: opts.Context, Seed: 1701, Logger: opts.Logger, ForwardOnly: true})
	if err != nil {
		return nil, err
	}
	c := &Classifier{net: n, opts: opts}
	if err := c.setUp(model, weights); err != nil {
		n.Close()
		return nil, err
	}
	return c, nil
}

func (c *Classifier) setUp(model, weights string) error {
	if err := c.net.CopyTrainedLayersFromFile(weights); err != nil {
		return err
	}
	for i, l := range c.net.Layers() {
		if l.Type() == "Input" {
			c.input = c.net.Tops(i)[0]
			break
		}
	}
	if c.input == nil || c.input.NumAxes() != 4 {
		return fmt.Errorf("%s: a classifier needs an Input layer of shape N x C x H x W", model)
	}
	s := c.input.Shape()
	c.c, c.h, c.w = s[1], s[2], s[3]
	if c.c != 1 && c.c != 3 {
		return fmt.Errorf("%s: input %s has %d channels; images give 1 (gray) or 3 (colour)", model, c.input.ShapeString(), c.c)
	}
	outs := c.net.OutputBlobs()
	if len(outs) == 0 {
		return fmt.Errorf("%s: the net has no output blob", model)
	}
	c.output = outs[len(outs)-1]
	c.rh, c.rw = c.opts.ResizeHeight, c.opts.ResizeWidth
	if c.rh == 0 && c.rw == 0 {
		c.rh, c.rw = c.h, c.w
	}
	if c.rh < c.h || c.rw < c.w {
		return fmt.Errorf("resize to %dx%d is smaller than the net's input %dx%d", c.rw, c.rh, c.w, c.h)
	}
	if c.opts.Scale == 0 {
		c.opts.Scale = 1
	}
	return c.loadMean()
}

func (c *Classifier) loadMean() error {
	o := c.opts
	if o.MeanFile != "" && len(o.MeanValues) > 0 {
		return errors.New("give a mean file or mean values, not both")
	}
	if n := len(o.MeanValues); n > 1 && n != c.c {
		return fmt.Errorf("%d mean values for %d channels", n, c.c)
	}
	if o.MeanFile == "" {
		return nil
	}
	var bp caffepb.BlobProto
	if err := protoio.ReadProtoFromBinaryFile(o.MeanFile, &bp); err != nil {
		return err
	}
	b, err := blob.New[float32]()
	if err != nil {
		return err
	}
	if err := b.FromProto(&bp, true); err != nil {
		return fmt.Errorf("mean file %s: %w", o.MeanFile, err)
	}
	if b.Count() != c.c*c.rh*c.rw {
		return fmt.Errorf("mean file %s has shape %s, the resized images are %dx%dx%d: resize to the mean's size", o.MeanFile, b.ShapeString(), c.c, c.rh, c.rw)
	}
	c.mean = slices.Clone(b.CPUData())
	return nil
}

// Close frees the net.
func (c *Classifier) Close() error { return c.net.Close() }

// Probabilities returns the net's output for img: the last output blob's
// values for the image, averaged over the crops when oversampling.
func (c *Classifier) Probabilities(img image.Image) ([]float32, error) {
	crops := c.crops()
	if err := c.input.Reshape([]int{len(crops), c.c, c.h, c.w}); err != nil {
		return nil, err
	}
	if err := c.net.Reshape(); err != nil {
		return nil, err
	}
	if err := c.fill(img, crops); err != nil {
		return nil, err
	}
	if _, err := c.net.Forward(); err != nil {
		return nil, err
	}
	per := c.output.Count() / len(crops)
	out := make([]float32, per)
	for k, v := range c.output.CPUData() {
		out[k%per] += v / float32(len(crops))
	}
	return out, nil
}

// Top returns the k most probable classes of img, best first (all of
// them when the net has fewer than k); k must be at least 1.
func (c *Classifier) Top(img image.Image, k int) ([]Prediction, error) {
	if k < 1 {
		return nil, fmt.Errorf("classify: top %d classes: want at least 1", k)
	}
	p, err := c.Probabilities(img)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
	out := make([]Prediction, 0, min(k, len(p)))
	for _, i := range order[:min(k, len(p))] {
		pr := Prediction{Class: i, Probability: p[i]}
		if i < len(c.opts.Labels) {
			pr.Label = c.opts.Labels[i]
		}
		out = append(out, pr)
	}
	return out, nil
}

// crop is a crop's top-left corner and whether it is mirrored.
type crop struct {
	y, x   int
	mirror bool
}

func (c *Classifier) crops() []crop {
	cy, cx := (c.rh-c.h)/2, (c.rw-c.w)/2
	if !c.opts.Oversample {
		return []crop{{cy, cx, false}}
	}
	corners := []crop{{0, 0, false}, {0, c.rw - c.w, false}, {c.rh - c.h, 0, false}, {c.rh - c.h, c.rw - c.w, false}, {cy, cx, false}}
	for _, k := range corners[:5] {
		corners = append(corners, crop{k.y, k.x, true})
	}
	return corners
}

// fill writes the crops of img into the input blob: pixels in Caffe's
// layout (B, G, R or gray planes), resized, cropped, minus the mean, times
// the scale.
func (c *Classifier) fill(img image.Image, crops []crop) error {
	mode := data.Color
	if c.c == 1 {
		mode = data.Gray
	}
	ch, h, w, pix := data.ImagePixels(img, mode, c.pix)
	c.pix = pix
	if h != c.rh || w != c.rw {
		if err := data.CheckImageSize("resize target", c.rh, c.rw, c.opts.Context.Settings().MaxImagePixels); err != nil {
			return err
		}
		r, err := c.rs.Resize(c.resize, pix, ch, h, w, c.rh, c.rw)
		if err != nil {
			return err
		}
		c.resize, pix = r, r
	}
	dst := c.input.MutableCPUData()
	item := c.c * c.h * c.w
	for k, cr := range crops {
		out := dst[k*item : (k+1)*item]
		for ci := range c.c {
			mv := float32(0)
			switch len(c.opts.MeanValues) {
			case 1:
				mv = c.opts.MeanValues[0]
			case c.c:
				mv = c.opts.MeanValues[ci]
			}
			for y := range c.h {
				for x := range c.w {
					sx := cr.x + x
					if cr.mirror {
						sx = cr.x + c.w - 1 - x
					}
					src := (ci*c.rh+cr.y+y)*c.rw + sx
					m := mv
					if c.mean != nil {
						m = c.mean[src]
					}
					out[(ci*c.h+y)*c.w+x] = (float32(pix[src]) - m) * c.opts.Scale
				}
			}
		}
	}
	return nil
}
