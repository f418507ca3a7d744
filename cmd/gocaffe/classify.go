package main

import (
	"fmt"
	"image"
	"io"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/classify"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/glog"
)

// runClassify prints the top classes of each image, as Caffe's
// cpp_classification example ("0.9123 - \"label\"" lines), with the
// preprocessing of classify.Classifier.
func runClassify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("classify", stderr)
	model := fs.String("model", "", "the deploy net prototxt (an Input layer, N x C x H x W)")
	weights := fs.String("weights", "", "the trained weights (.caffemodel)")
	meanFile := fs.String("mean_file", "", "a .binaryproto mean image of the resized size")
	meanValue := fs.String("mean_value", "", "comma-separated mean per channel (or one for all)")
	scale := fs.Float64("scale", 1, "multiply pixels by this after the mean (transform_param's scale)")
	resizeH := fs.Int("resize_height", 0, "resize images to this height first (0: the net's input)")
	resizeW := fs.Int("resize_width", 0, "resize images to this width first (0: the net's input)")
	oversample := fs.Bool("oversample", false, "average ten crops (corners, center, mirrored) instead of the center crop")
	labels := fs.String("labels", "", "a file of class names, one per line (synset_words.txt)")
	top := fs.Int("top", 5, "how many classes to print per image")
	var nf netFlags
	nf.register(fs)
	setUsage(fs, stderr, "gocaffe classify -model deploy.prototxt -weights x.caffemodel [-mean_file m | -mean_value v] [-scale s] [-labels synset_words.txt] [-top 5] images...",
		"Classifies images with a trained net and prints the most probable classes.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *model == "" || *weights == "" || len(pos) == 0 {
		return usageError(fs, stderr, "need -model, -weights and at least one image")
	}
	if *top < 1 {
		return fmt.Errorf("-top %d: want at least 1 class per image", *top)
	}
	opts := classify.Options{MeanFile: *meanFile, Scale: float32(*scale), ResizeHeight: *resizeH, ResizeWidth: *resizeW,
		Oversample: *oversample, Logger: glog.Logger()}
	for _, v := range splitList(*meanValue) {
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return fmt.Errorf("-mean_value %q: %w", v, err)
		}
		opts.MeanValues = append(opts.MeanValues, float32(f))
	}
	if *labels != "" {
		b, err := fileio.ReadFile(*labels, fileio.ProtoLimit)
		if err != nil {
			return fmt.Errorf("-labels: %w", err)
		}
		opts.Labels = strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
		for i := range opts.Labels {
			opts.Labels[i] = strings.TrimRight(opts.Labels[i], "\r")
		}
	}
	if opts.Context, err = nf.context(); err != nil {
		return err
	}
	c, err := classify.New(*model, *weights, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, path := range pos {
		img, err := readImage(path)
		if err != nil {
			return err
		}
		preds, err := c.Top(img, *top)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(stdout, "---------- Prediction for %s ----------\n", path)
		for _, p := range preds {
			name := p.Label
			if name == "" {
				name = strconv.Itoa(p.Class)
			}
			fmt.Fprintf(stdout, "%.4f - %q\n", p.Probability, name)
		}
	}
	return nil
}

// readImage reads and decodes an image file with gocaffe's checks (a
// regular file, the pixel cap from the header).
func readImage(path string) (image.Image, error) {
	b, err := fileio.ReadFile(path, fileio.ProtoLimit)
	if err != nil {
		return nil, fmt.Errorf("could not read image: %w", err)
	}
	img, err := data.DecodeImage(b, config.MaxImagePixels)
	if err != nil {
		return nil, fmt.Errorf("could not decode image %s: %w", path, err)
	}
	return img, nil
}
