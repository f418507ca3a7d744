package main

import (
	"fmt"
	"io"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// runComputeImageMean computes the mean image of a database of Datums, as
// Caffe's tools/compute_image_mean.
func runComputeImageMean(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compute_image_mean", stderr)
	backendName := fs.String("backend", "lmdb", "the database backend to read: lmdb or leveldb")
	setUsage(fs, stderr, "gocaffe compute_image_mean [-backend lmdb|leveldb] INPUT_DB [OUTPUT_FILE]",
		"Computes the mean of all the Datums in INPUT_DB (decoding encoded ones) and\n"+
			"writes it to OUTPUT_FILE as a 1xCxHxW BlobProto (a .binaryproto mean file\n"+
			"for transform_param's mean_file); logs the mean of each channel.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError(fs, stderr, "want 1 or 2 arguments (database, mean file), got %d", len(pos))
	}
	backend, err := parseBackendFlag(*backendName)
	if err != nil {
		return err
	}
	mean, err := computeImageMean(backend, pos[0], stderr)
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		glog.Infof("Write to %s", pos[1])
		if err := protoio.WriteProtoToBinaryFile(mean, pos[1]); err != nil {
			return err
		}
	}
	logChannelMeans(mean)
	return nil
}

// computeImageMean returns the element-wise mean of every Datum in the
// database as a BlobProto with num 1 and the Datums' channels, height and
// width.
//
// The BlobProto is shaped by the legacy num/channels/height/width fields,
// exactly as Caffe's tool writes it, so the file is the one Caffe would
// write; every reader (Caffe's, gocaffe's blob.FromProto, pycaffe's
// blobproto_to_array) accepts that form. Sums are kept in float64 where
// Caffe uses float32, so means over millions of images do not lose
// precision; the stored means are float32 as in Caffe.
func computeImageMean(backend caffepb.DataParameter_DB, path string, stderr io.Writer) (*caffepb.BlobProto, error) {
	db, err := data.Open(backend, path, data.Read)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cur, err := db.NewCursor()
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	defer cur.Close()
	if !cur.Valid() {
		return nil, fmt.Errorf("database %s is empty: there is no image to average", path)
	}

	rep, stop := startProgress(stderr, "compute_image_mean", "images", 0)
	defer stop()
	var (
		sum         []float64
		c, h, w     int
		firstKey    string
		count       int
		loggedCodec bool
	)
	for cur.Valid() {
		key := string(cur.Key())
		d := &caffepb.Datum{}
		if err := proto.Unmarshal(cur.Value(), d); err != nil {
			return nil, fmt.Errorf("database %s, record %q: not a Datum: %w", path, key, err)
		}
		if d.GetEncoded() && !loggedCodec {
			glog.Infof("Decoding Datum")
			loggedCodec = true
		}
		// Native colour, as Caffe's DecodeDatumNative: grey images stay one
		// channel.
		if d, err = data.DecodeDatum(d, data.Native, config.MaxImagePixels); err != nil {
			return nil, fmt.Errorf("database %s, record %q: %w", path, key, err)
		}
		dc, dh, dw, err := data.DatumShape(d)
		if err != nil {
			return nil, fmt.Errorf("database %s, record %q: %w", path, key, err)
		}
		if sum == nil {
			c, h, w, firstKey = dc, dh, dw, key
			sum = make([]float64, c*h*w)
			glog.Infof("Starting Iteration")
		} else if dc != c || dh != h || dw != w {
			return nil, fmt.Errorf("database %s, record %q: image is %dx%dx%d (channels x height x width) but the first, %q, is %dx%dx%d: the mean needs images of one size",
				path, key, dc, dh, dw, firstKey, c, h, w)
		}
		if b := d.GetData(); len(b) > 0 {
			for i, v := range b {
				sum[i] += float64(v)
			}
		} else {
			for i, v := range d.GetFloatData() {
				sum[i] += float64(v)
			}
		}
		count++
		rep.Add(1)
		if err := cur.Next(); err != nil {
			return nil, fmt.Errorf("database %s: reading the record after %q: %w", path, key, err)
		}
	}
	rep.Finish()

	mean := make([]float32, len(sum))
	for i, s := range sum {
		mean[i] = float32(s / float64(count))
	}
	return &caffepb.BlobProto{
		Num: proto.Int32(1), Channels: proto.Int32(int32(c)),
		Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)),
		Data: mean,
	}, nil
}

// logChannelMeans logs the mean of each channel, in Caffe's words, for
// transform_param's mean_value.
func logChannelMeans(mean *caffepb.BlobProto) {
	c := int(mean.GetChannels())
	dim := int(mean.GetHeight()) * int(mean.GetWidth())
	glog.Infof("Number of channels: %d", c)
	for ch := range c {
		var s float64
		for _, v := range mean.GetData()[ch*dim : (ch+1)*dim] {
			s += float64(v)
		}
		// Caffe prints the value with C++'s default stream format (six
		// significant digits) and no space after the colon.
		glog.Infof("mean_value channel [%d]:%s", ch, strconv.FormatFloat(float64(float32(s/float64(dim))), 'g', 6, 32))
	}
}
