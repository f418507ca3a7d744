package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// jpegQuality is OpenCV's default for cv::imencode(".jpg"), which Caffe
// uses when it re-encodes images.
const jpegQuality = 95

// imagesetOptions are convert_imageset's flags.
type imagesetOptions struct {
	gray, shuffle, checkSize, encoded bool
	encodeType                        string // "", "png" or "jpg"
	resizeWidth, resizeHeight         int
	minDim, maxDim                    int // convert_annoset's aspect-keeping resize
	seed                              int64
	backend                           caffepb.DataParameter_DB
}

// runConvertImageset converts a list of labelled images into a database of
// Datums, as Caffe's tools/convert_imageset.
func runConvertImageset(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("convert_imageset", stderr)
	var o imagesetOptions
	backendName := o.addFlags(fs)
	setUsage(fs, stderr, "gocaffe convert_imageset [flags] ROOTFOLDER/ LISTFILE DB_NAME",
		"Converts the images listed in LISTFILE, one \"<path> <integer label>\" a line with\n"+
			"paths relative to ROOTFOLDER, into a database of Datums with keys\n"+
			"%08d_<path>, as Caffe's convert_imageset. Images that cannot be read are\n"+
			"skipped and counted.")
	pos, err := parseConversion(fs, args, stderr, backendName, &o, o.check)
	if err != nil {
		return err
	}
	_, err = convertImageset(pos[0], pos[1], pos[2], &o, stderr)
	return err
}

// parseConversion parses the command line of convert_imageset or
// convert_annoset: the flags, checked by check, and three arguments (root
// folder, list file, database).
func parseConversion(fs *flag.FlagSet, args []string, stderr io.Writer, backendName *string, o *imagesetOptions, check func() error) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 3 {
		return nil, usageError(fs, stderr, "want 3 arguments (root folder, list file, database), got %d", len(pos))
	}
	if o.backend, err = parseBackendFlag(*backendName); err != nil {
		return nil, err
	}
	return pos, check()
}

// addFlags defines the flags convert_imageset and convert_annoset share
// and returns the backend's.
func (o *imagesetOptions) addFlags(fs *flag.FlagSet) *string {
	fs.BoolVar(&o.gray, "gray", false, "store images as grayscale (one channel) instead of colour (three, in B, G, R order)")
	fs.BoolVar(&o.shuffle, "shuffle", false, "shuffle the list's order (see -seed)")
	fs.Int64Var(&o.seed, "seed", -1, "the seed of -shuffle; -1 for a random one, logged so that the order can be repeated")
	backendName := fs.String("backend", "lmdb", "the database backend to write: lmdb or leveldb")
	fs.IntVar(&o.resizeWidth, "resize_width", 0, "resize images to this width (with -resize_height; bilinear); 0 keeps their size")
	fs.IntVar(&o.resizeHeight, "resize_height", 0, "resize images to this height (with -resize_width; bilinear); 0 keeps their size")
	fs.BoolVar(&o.checkSize, "check_size", false, "check that all images have the same size (after any resizing)")
	fs.BoolVar(&o.encoded, "encoded", false, "store the image files' encoded bytes (PNG, JPEG) instead of raw pixels")
	fs.StringVar(&o.encodeType, "encode_type", "", "with -encoded, the encoding to store: png or jpg; empty keeps each file's own (implies -encoded)")
	return backendName
}

// check validates and normalises the flags.
func (o *imagesetOptions) check() error {
	if o.resizeWidth < 0 || o.resizeHeight < 0 {
		return fmt.Errorf("-resize_width %d -resize_height %d: sizes must not be negative", o.resizeWidth, o.resizeHeight)
	}
	// Caffe resizes only when both are set and silently ignores one alone;
	// that is always a mistake, so say so.
	if (o.resizeWidth > 0) != (o.resizeHeight > 0) {
		return fmt.Errorf("-resize_width %d -resize_height %d: give both sizes to resize, or neither", o.resizeWidth, o.resizeHeight)
	}
	// Checked before the database is created: a target too large to
	// allocate would otherwise kill the process and leave an empty database.
	if o.resizeWidth > 0 {
		if err := data.CheckImageSize("-resize_width/-resize_height target", o.resizeHeight, o.resizeWidth, config.MaxImagePixels); err != nil {
			return err
		}
	}
	if o.encodeType != "" {
		enc, ok := normalizeEncoding(o.encodeType)
		if !ok {
			return fmt.Errorf("-encode_type %q: gocaffe encodes png and jpg", o.encodeType)
		}
		if !o.encoded {
			glog.Infof("encode_type specified, assuming encoded=true.")
		}
		o.encodeType, o.encoded = enc, true
	}
	return nil
}

// normalizeEncoding maps an encoding or file extension (any case, with or
// without the dot) to "png" or "jpg"; ok is false for anything gocaffe
// cannot encode.
func normalizeEncoding(s string) (string, bool) {
	switch strings.ToLower(strings.TrimPrefix(s, ".")) {
	case "png":
		return "png", true
	case "jpg", "jpeg":
		return "jpg", true
	}
	return "", false
}

// imageResult is the outcome of converting one list entry: a record, or
// skip, the reason the image could not be read (logged and counted, as
// Caffe skips such images), or err, a failure that stops the conversion.
type imageResult struct {
	value   []byte
	c, h, w int // the image's shape as stored (before any encoding)
	skip    error
	err     error
}

// convertImageset writes the listed images into a new database and returns
// the number stored.
func convertImageset(root, listPath, dbPath string, o *imagesetOptions, stderr io.Writer) (stored int, err error) {
	lines, err := data.ReadImageList(listPath)
	if err != nil {
		return 0, err
	}
	if len(lines) == 0 {
		return 0, fmt.Errorf("list file %s lists no images", listPath)
	}
	if o.shuffle {
		seed := o.seed
		if seed < 0 {
			seed = time.Now().UnixNano() & (1<<63 - 1)
		}
		glog.Infof("Shuffling data (seed %d: -seed %d repeats this order)", seed, seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
	glog.Infof("A total of %d images.", len(lines))
	root = rootPrefix(root)
	entries := make([]listedFile, len(lines))
	for i, e := range lines {
		entries[i] = listedFile{Path: e.Path, Line: e.Line}
	}
	return writeImageDatabase("convert_imageset", entries, listPath, dbPath, o, stderr, func(i int) imageResult {
		return convertImage(root+lines[i].Path, lines[i].Label, o)
	})
}

// rootPrefix returns the root folder as the prefix of list paths. Caffe
// prepends the root folder as written, so "images" and "list entry a.jpg"
// make "imagesa.jpg"; the separator is added when the root is a directory,
// and otherwise Caffe's plain prefix kept.
func rootPrefix(root string) string {
	if root != "" && !strings.HasSuffix(root, "/") && !strings.HasSuffix(root, string(filepath.Separator)) {
		if st, err := os.Stat(root); err == nil && st.IsDir() {
			root += string(filepath.Separator)
		}
	}
	return root
}

// listedFile is an image of a list file: its path as written and line.
type listedFile struct {
	Path string
	Line int
}

// writeImageDatabase writes the records convert makes for each listed
// image (on all CPUs, see imagePipeline) into a new database, in list
// order, with Caffe's keys %08d_<path>, and returns the number stored.
// Images convert cannot read are skipped and counted, as Caffe does.
func writeImageDatabase(tool string, entries []listedFile, listPath, dbPath string, o *imagesetOptions, stderr io.Writer, convert func(i int) imageResult) (stored int, err error) {
	db, err := createDB(o.backend, dbPath)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			db.abort()
		}
	}()
	rep, stop := startProgress(stderr, tool, "images", len(entries))
	defer stop()

	pipe := startImagePipeline(len(entries), convert)
	defer pipe.stop()
	var (
		skipped                int
		firstC, firstH, firstW int
		firstName              string
		key                    []byte
	)
	for i, e := range entries {
		r := pipe.result(i)
		switch {
		case r.err != nil:
			return stored, fmt.Errorf("%s:%d: %s: %w", listPath, e.Line, e.Path, r.err)
		case r.skip != nil:
			glog.Errorf("%s:%d: skipping %v", listPath, e.Line, r.skip)
			skipped++
			rep.Add(1)
			continue
		}
		if o.checkSize {
			if firstName == "" {
				firstC, firstH, firstW, firstName = r.c, r.h, r.w, e.Path
			} else if r.c != firstC || r.h != firstH || r.w != firstW {
				return stored, fmt.Errorf("%s:%d: image %s is %dx%dx%d (channels x height x width) but the first image, %s, is %dx%dx%d: -check_size wants them all the same (-resize_width and -resize_height make them so)",
					listPath, e.Line, e.Path, r.c, r.h, r.w, firstName, firstC, firstH, firstW)
			}
		}
		// The key's number is the position in the (shuffled) list,
		// skipped images included, as in Caffe.
		key = fmt.Appendf(key[:0], "%08d_%s", i, e.Path)
		if err := db.put(key, r.value); err != nil {
			return stored, err
		}
		stored++
		rep.Add(1)
	}
	if stored == 0 {
		return 0, fmt.Errorf("none of the %d images listed in %s could be read", len(entries), listPath)
	}
	if err := db.finish(); err != nil {
		return stored, err
	}
	rep.Finish()
	if skipped > 0 {
		glog.Warningf("%d of %d images could not be read and were skipped; %d stored in %s", skipped, len(entries), stored, dbPath)
	}
	return stored, nil
}

// imagePipeline converts list entries on all CPUs, since decoding and
// resizing dominate the time, while the database is still written in list
// order: result(i) waits for the i-th entry. At most len(slots) entries are
// in flight, which bounds memory for large images; slot i%len(slots) holds
// entry i's result, free again once result(i) has returned (entry
// i+len(slots) is only started after that).
type imagePipeline struct {
	slots  []chan imageResult
	window chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

func startImagePipeline(n int, convert func(i int) imageResult) *imagePipeline {
	workers := runtime.GOMAXPROCS(0)
	p := &imagePipeline{
		slots:  make([]chan imageResult, 4*workers),
		window: make(chan struct{}, 4*workers),
		done:   make(chan struct{}),
	}
	for i := range p.slots {
		p.slots[i] = make(chan imageResult, 1)
	}
	jobs := make(chan int)
	for range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for i := range jobs {
				p.slots[i%len(p.slots)] <- convert(i)
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case p.window <- struct{}{}:
			case <-p.done:
				return
			}
			select {
			case jobs <- i:
			case <-p.done:
				return
			}
		}
	}()
	return p
}

// result waits for entry i's result; entries must be taken in order.
func (p *imagePipeline) result(i int) imageResult {
	r := <-p.slots[i%len(p.slots)]
	<-p.window
	return r
}

// stop ends the work early (or after the last result) and waits for the
// workers.
func (p *imagePipeline) stop() {
	p.once.Do(func() {
		close(p.done)
		p.wg.Wait()
	})
}

// convertImage reads one image and makes its record (see imageFile.datum).
func convertImage(path string, label int32, o *imagesetOptions) imageResult {
	f, res := readImageFile(path, o)
	if res.skip != nil || res.err != nil {
		return res
	}
	d, err := f.datum(path, label, o)
	if err != nil {
		return imageResult{err: err}
	}
	res.value, res.err = proto.Marshal(d)
	return res
}

// imageFile is one image read for a conversion.
type imageFile struct {
	raw          []byte         // the file's bytes
	img          image.Image    // decoded
	d            *caffepb.Datum // its raw pixels, resized as the flags ask
	origH, origW int            // its size in the file
	resized      bool
}

// readImageFile reads and decodes the image at path (in colour, three
// channels, B, G, R, whatever the file holds, or grey with -gray, as
// OpenCV's imread for Caffe) and resizes it as the flags ask. A file that
// cannot be read is a skip; other failures are errors.
func readImageFile(path string, o *imagesetOptions) (imageFile, imageResult) {
	raw, err := fileio.ReadFile(path, fileio.ProtoLimit)
	if err != nil {
		return imageFile{}, imageResult{skip: fmt.Errorf("could not open or find file %s: %w", path, err)}
	}
	img, err := data.DecodeImage(raw, config.MaxImagePixels)
	if err != nil {
		return imageFile{}, imageResult{skip: fmt.Errorf("could not decode image %s: %w", path, err)}
	}
	mode := data.Color
	if o.gray {
		mode = data.Gray
	}
	f := imageFile{raw: raw, img: img, d: data.ImageToDatum(img, mode)}
	c, h, w := int(f.d.GetChannels()), int(f.d.GetHeight()), int(f.d.GetWidth())
	f.origH, f.origW = h, w
	nh, nw := o.targetSize(h, w)
	if nh != h || nw != w {
		if err := data.CheckImageSize("resize target", nh, nw, config.MaxImagePixels); err != nil {
			return imageFile{}, imageResult{err: err}
		}
		px, err := data.ResizeBilinear(f.d.Data, c, h, w, nh, nw)
		if err != nil {
			return imageFile{}, imageResult{err: err}
		}
		h, w, f.resized = nh, nw, true
		f.d = &caffepb.Datum{Channels: proto.Int32(int32(c)), Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)), Data: px}
	}
	return f, imageResult{c: c, h: h, w: w}
}

// targetSize is the size an h x w image is stored at: with -min_dim or
// -max_dim (convert_annoset) scaled, its aspect kept, so that its short
// side reaches min_dim without its long side passing max_dim (SSD's
// ReadImageToCVMat, sizes rounded as cv::resize rounds them); else with
// -resize_width and -resize_height that size; else its own.
func (o *imagesetOptions) targetSize(h, w int) (int, int) {
	if o.minDim > 0 || o.maxDim > 0 {
		short, long := min(h, w), max(h, w)
		scale := float32(1)
		if o.minDim > 0 && short < o.minDim {
			scale = float32(o.minDim) / float32(short)
		}
		if o.maxDim > 0 && int(scale*float32(long)) > o.maxDim {
			scale = float32(o.maxDim) / float32(long)
		}
		if scale == 1 {
			return h, w
		}
		return int(math.Round(float64(float32(h) * scale))), int(math.Round(float64(float32(w) * scale)))
	}
	if o.resizeWidth > 0 {
		return o.resizeHeight, o.resizeWidth
	}
	return h, w
}

// datum makes the image's Datum: raw pixels (B, G, R planes, or one grey
// plane), or with -encoded the image file's bytes when they are already
// what was asked for, re-encoded otherwise.
func (f imageFile) datum(path string, label int32, o *imagesetOptions) (*caffepb.Datum, error) {
	if !o.encoded {
		d := f.d
		d.Label = proto.Int32(label)
		return d, nil
	}
	// Caffe stores the file's bytes when they already hold the image as it
	// would be stored: not resized, in the requested encoding (or the
	// file's own), and with the requested number of channels. Caffe's own
	// channel test can never fail, because OpenCV converts on reading; it
	// is applied here so that a -gray database never holds colour images
	// (nor a colour one grey images), which the Data layer would otherwise
	// decode with the wrong number of channels.
	enc, known := o.encodeType, true
	if enc == "" {
		enc, known = normalizeEncoding(filepath.Ext(path))
	}
	sameEncoding := known && (o.encodeType == "" || matchesExt(path, enc))
	if !f.resized && sameEncoding && nativeChannels(f.img) == int(f.d.GetChannels()) {
		return &caffepb.Datum{Data: f.raw, Label: proto.Int32(label), Encoded: proto.Bool(true)}, nil
	}
	if !known {
		// The file's own format (GIF, or a name without an extension) is
		// one gocaffe decodes but does not encode; PNG loses nothing.
		enc = "png"
	}
	var buf bytes.Buffer
	if err := encodeImage(&buf, datumImage(f.d), enc); err != nil {
		return nil, fmt.Errorf("encoding %s as %s: %w", path, enc, err)
	}
	return &caffepb.Datum{Data: buf.Bytes(), Label: proto.Int32(label), Encoded: proto.Bool(true)}, nil
}

// matchesExt reports whether path's extension names the encoding enc
// ("jpg" matches .jpg and .jpeg), as Caffe's matchExt.
func matchesExt(path, enc string) bool {
	e, ok := normalizeEncoding(filepath.Ext(path))
	return ok && e == enc
}

// nativeChannels is the number of channels the Data layer gets when it
// decodes the image in its native colour (data.DecodeDatum with Native).
func nativeChannels(img image.Image) int {
	switch img.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		return 1
	}
	return 3
}

// datumImage turns a raw byte datum back into an image: one grey plane, or
// B, G, R planes.
func datumImage(d *caffepb.Datum) image.Image {
	c, h, w := int(d.GetChannels()), int(d.GetHeight()), int(d.GetWidth())
	px := d.GetData()
	r := image.Rect(0, 0, w, h)
	if c == 1 {
		return &image.Gray{Pix: px, Stride: w, Rect: r}
	}
	img := image.NewNRGBA(r)
	plane := w * h
	for i := range plane {
		img.Pix[4*i] = px[2*plane+i]
		img.Pix[4*i+1] = px[plane+i]
		img.Pix[4*i+2] = px[i]
		img.Pix[4*i+3] = 255
	}
	return img
}

func encodeImage(w io.Writer, img image.Image, enc string) error {
	switch enc {
	case "png":
		return png.Encode(w, img)
	case "jpg":
		return jpeg.Encode(w, img, &jpeg.Options{Quality: jpegQuality})
	}
	return errors.New("unsupported encoding " + enc)
}
