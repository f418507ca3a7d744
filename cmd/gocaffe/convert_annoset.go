package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// annosetOptions are convert_annoset's flags beyond convert_imageset's.
type annosetOptions struct {
	imagesetOptions
	annoType, labelType, labelMapFile string
	checkLabel                        bool
}

// runConvertAnnoset converts a list of images and their annotation files
// into a database of AnnotatedDatums, as SSD's tools/convert_annoset
// (weiliu89/caffe), for the AnnotatedData layer.
func runConvertAnnoset(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("convert_annoset", stderr)
	var o annosetOptions
	backendName := o.addFlags(fs)
	fs.StringVar(&o.annoType, "anno_type", "classification", "the annotation: classification (list lines \"<image> <integer label>\") or detection (\"<image> <annotation file>\")")
	fs.StringVar(&o.labelType, "label_type", "xml", "with -anno_type detection, the annotation files' format: xml (VOC), json (SSD's COCO files) or txt (\"label xmin ymin xmax ymax\" lines, in pixels)")
	fs.StringVar(&o.labelMapFile, "label_map_file", "", "with -anno_type detection, a LabelMap in protobuf text format mapping class names to labels")
	fs.BoolVar(&o.checkLabel, "check_label", false, "fail when the label map gives a name twice")
	fs.IntVar(&o.minDim, "min_dim", 0, "resize images, keeping their aspect, so that the short side is at least this (see -max_dim); 0: no minimum")
	fs.IntVar(&o.maxDim, "max_dim", 0, "resize images, keeping their aspect, so that the long side is at most this; 0: no maximum")
	setUsage(fs, stderr, "gocaffe convert_annoset [flags] ROOTFOLDER/ LISTFILE DB_NAME",
		"Converts the images listed in LISTFILE and their annotations into a database of\n"+
			"AnnotatedDatums with keys %08d_<image path>, as SSD's convert_annoset. With\n"+
			"-anno_type detection each line is \"<image> <annotation file>\", both relative to\n"+
			"ROOTFOLDER; boxes are stored normalized to the image size the annotation gives.\n"+
			"An image without an annotation file is stored with no boxes.")
	pos, err := parseConversion(fs, args, stderr, backendName, &o.imagesetOptions, o.check)
	if err != nil {
		return err
	}
	_, err = convertAnnoset(pos[0], pos[1], pos[2], &o, stderr)
	return err
}

func (o *annosetOptions) check() error {
	if o.minDim < 0 || o.maxDim < 0 {
		return fmt.Errorf("-min_dim %d -max_dim %d: sizes must not be negative", o.minDim, o.maxDim)
	}
	switch o.annoType {
	case "classification":
	case "detection":
		switch o.labelType {
		case "xml", "json", "txt":
		default:
			return fmt.Errorf("-label_type %q: want xml, json or txt", o.labelType)
		}
		if o.labelMapFile == "" && o.labelType != "txt" {
			return fmt.Errorf("-anno_type detection with -label_type %s needs -label_map_file to map names to labels", o.labelType)
		}
	default:
		return fmt.Errorf("-anno_type %q: want classification or detection", o.annoType)
	}
	return o.imagesetOptions.check()
}

// annosetLine is one line of convert_annoset's list: an image and its
// integer label or annotation file.
type annosetLine struct {
	listedFile
	second string
}

// readAnnosetList reads whitespace-separated pairs, as SSD reads its list
// with >>: blank lines are skipped; a line without exactly two fields is
// an error naming the line.
func readAnnosetList(path string) ([]annosetLine, error) {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, fmt.Errorf("list file: %w", err)
	}
	defer f.Close()
	var out []annosetLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"<image> <label or annotation file>\", got %q", path, n, sc.Text())
		}
		out = append(out, annosetLine{listedFile{Path: fields[0], Line: n}, fields[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list file %s: %w", path, err)
	}
	return out, nil
}

// convertAnnoset writes the listed images with their annotations into a
// new database and returns the number stored.
func convertAnnoset(root, listPath, dbPath string, o *annosetOptions, stderr io.Writer) (int, error) {
	lines, err := readAnnosetList(listPath)
	if err != nil {
		return 0, err
	}
	if len(lines) == 0 {
		return 0, fmt.Errorf("list file %s lists no images", listPath)
	}
	annotations := data.AnnotationFile{Format: o.labelType}
	if o.annoType == "detection" && o.labelMapFile != "" {
		m, err := data.ReadLabelMap(o.labelMapFile)
		if err != nil {
			return 0, err
		}
		if annotations.Labels, err = data.LabelsByName(m, o.checkLabel); err != nil {
			return 0, fmt.Errorf("%s: %w", o.labelMapFile, err)
		}
	}
	labels := make([]int32, len(lines))
	if o.annoType == "classification" {
		for i, l := range lines {
			v, err := strconv.ParseInt(l.second, 10, 32)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: label %q is not an integer (with -anno_type detection the second field is an annotation file)", listPath, l.Line, l.second)
			}
			labels[i] = int32(v)
		}
	}
	if o.shuffle {
		seed := o.seed
		if seed < 0 {
			seed = time.Now().UnixNano() & (1<<63 - 1)
		}
		glog.Infof("Shuffling data (seed %d: -seed %d repeats this order)", seed, seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		rng.Shuffle(len(lines), func(i, j int) {
			lines[i], lines[j] = lines[j], lines[i]
			labels[i], labels[j] = labels[j], labels[i]
		})
	}
	glog.Infof("A total of %d images.", len(lines))
	root = rootPrefix(root)
	entries := make([]listedFile, len(lines))
	for i, l := range lines {
		entries[i] = l.listedFile
	}
	return writeImageDatabase("convert_annoset", entries, listPath, dbPath, &o.imagesetOptions, stderr, func(i int) imageResult {
		if o.annoType == "classification" {
			return annotatedImage(root+lines[i].Path, labels[i], "", annotations, &o.imagesetOptions)
		}
		return annotatedImage(root+lines[i].Path, -1, root+lines[i].second, annotations, &o.imagesetOptions)
	})
}

// annotatedImage makes one AnnotatedDatum record: the image's Datum (as
// convert_imageset stores it) and, when annoPath is given, its boxes with
// type BBOX. A missing annotation file gives an image without boxes, as
// in SSD.
func annotatedImage(path string, label int32, annoPath string, annotations data.AnnotationFile, o *imagesetOptions) imageResult {
	f, res := readImageFile(path, o)
	if res.skip != nil || res.err != nil {
		return res
	}
	d, err := f.datum(path, label, o)
	if err != nil {
		return imageResult{err: err}
	}
	rec := &caffepb.AnnotatedDatum{Datum: d}
	if annoPath != "" {
		rec.Type = caffepb.AnnotatedDatum_BBOX.Enum()
		if _, err := os.Stat(annoPath); !errors.Is(err, fs.ErrNotExist) {
			if rec.AnnotationGroup, err = annotations.Read(annoPath, f.origH, f.origW); err != nil {
				return imageResult{err: err}
			}
		}
	}
	res.value, res.err = proto.Marshal(rec)
	return res
}
