package main

import (
	"fmt"
	"io"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// runExtractFeatures is Caffe's tools/extract_features: the net runs in
// its TEST phase -iterations times, and for each named blob every item of
// every batch becomes a Datum of float_data in that blob's database, under
// keys 0000000000, 0000000001, ... (channels, height and width of the
// blob's legacy shape, as Caffe writes them).
//
// Caffe's positional form is accepted too:
//
//	gocaffe extract_features WEIGHTS MODEL BLOBS DBS ITERATIONS BACKEND [CPU|GPU] [DEVICE_ID]
func runExtractFeatures(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("extract_features", stderr)
	model := fs.String("model", "", "the net prototxt (its TEST phase runs)")
	weights := fs.String("weights", "", "the trained weights: comma-separated .caffemodel files")
	blobs := fs.String("blobs", "", "comma-separated names of the blobs to save")
	dbs := fs.String("db", "", "comma-separated databases to create, one per blob")
	iterations := fs.Int("iterations", 1, "the number of mini-batches to run")
	backendName := fs.String("backend", "lmdb", "the databases' backend: lmdb or leveldb")
	var nf netFlags
	nf.register(fs)
	setUsage(fs, stderr, "gocaffe extract_features -model net.prototxt -weights x.caffemodel -blobs a[,b] -db a_db[,b_db] -iterations N [-backend lmdb|leveldb] [-gpu 0]",
		"Runs the net's TEST phase and saves the named blobs' items as Datums of float_data.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		if err := caffeExtractArgs(pos, weights, model, blobs, dbs, iterations, backendName, &nf); err != nil {
			return usageError(fs, stderr, "%v", err)
		}
	}
	if *model == "" || *weights == "" || *blobs == "" || *dbs == "" {
		return usageError(fs, stderr, "need -model, -weights, -blobs and -db")
	}
	names, paths := splitList(*blobs), splitList(*dbs)
	if len(names) != len(paths) {
		return fmt.Errorf("-blobs names %d blobs and -db %d databases: the numbers must be equal", len(names), len(paths))
	}
	if *iterations < 1 {
		return fmt.Errorf("-iterations %d: want at least 1", *iterations)
	}
	backend, err := parseBackendFlag(*backendName)
	if err != nil {
		return err
	}
	ctx, err := nf.context()
	if err != nil {
		return err
	}
	n, err := net.NewFromFile[float32](*model, net.Options{State: nf.state(caffepb.Phase_TEST), Context: ctx, Seed: 1701, Logger: glog.Logger(), SkipUnknownFields: nf.skipUnknown, ForwardOnly: true, Keep: names})
	if err != nil {
		return err
	}
	defer n.Close()
	if err := loadWeightList(n, *weights); err != nil {
		return err
	}
	return extractFeatures(n, names, paths, backend, *iterations, *model)
}

// caffeExtractArgs reads Caffe's positional arguments into the flags.
func caffeExtractArgs(pos []string, weights, model, blobs, dbs *string, iterations *int, backend *string, nf *netFlags) error {
	if len(pos) < 6 || len(pos) > 8 {
		return fmt.Errorf("Caffe's form takes 6 to 8 arguments (weights, net, blobs, databases, mini-batches, backend[, CPU|GPU[, device]]), got %d", len(pos))
	}
	*weights, *model, *blobs, *dbs, *backend = pos[0], pos[1], pos[2], pos[3], pos[5]
	var err error
	if *iterations, err = strconv.Atoi(pos[4]); err != nil {
		return fmt.Errorf("number of mini-batches %q: %w", pos[4], err)
	}
	if len(pos) >= 7 && pos[6] == "GPU" {
		nf.gpu = "0"
		if len(pos) == 8 {
			nf.gpu = pos[7]
		}
	}
	return nil
}

// extractFeatures runs the batches and writes the databases; on failure
// the databases written so far are removed.
func extractFeatures(n *net.Net[float32], names, paths []string, backend caffepb.DataParameter_DB, iterations int, model string) (err error) {
	feats := make([]*blob.Blob[float32], len(names))
	for i, name := range names {
		if feats[i] = n.BlobByName(name); feats[i] == nil {
			return fmt.Errorf("unknown feature blob name %s in the network %s", name, model)
		}
		if feats[i].NumAxes() < 1 || feats[i].NumAxes() > 4 {
			return fmt.Errorf("blob %s has shape %s: a Datum holds blobs of 1 to 4 axes", name, feats[i].ShapeString())
		}
	}
	out := make([]*outDB, 0, len(paths))
	defer func() {
		if err != nil {
			for _, o := range out {
				o.abort()
			}
		}
	}()
	for _, p := range paths {
		glog.Infof("Opening dataset %s", p)
		o, err := createDB(backend, p)
		if err != nil {
			return err
		}
		out = append(out, o)
	}
	glog.Infof("Extracting Features")
	counts := make([]int, len(names))
	var datum caffepb.Datum
	var buf []byte
	for it := range iterations {
		if _, err := n.Forward(); err != nil {
			return fmt.Errorf("mini-batch %d: %w", it, err)
		}
		for i, b := range feats {
			num := b.Shape()[0]
			if num == 0 {
				continue
			}
			dim := b.Count() / num
			values := b.CPUData()
			datum.Channels, datum.Height, datum.Width = legacyDim(b, 1), legacyDim(b, 2), legacyDim(b, 3)
			for item := range num {
				datum.FloatData = values[item*dim : (item+1)*dim]
				if buf, err = (proto.MarshalOptions{Deterministic: true}).MarshalAppend(buf[:0], &datum); err != nil {
					return err
				}
				if err := out[i].put(fmt.Appendf(nil, "%010d", counts[i]), buf); err != nil {
					return err
				}
				counts[i]++
				if counts[i]%1000 == 0 {
					glog.Infof("Extracted features of %d query images for feature blob %s", counts[i], names[i])
				}
			}
		}
	}
	for i, o := range out {
		if err := o.finish(); err != nil {
			return err
		}
		glog.Infof("Extracted features of %d query images for feature blob %s", counts[i], names[i])
	}
	glog.Infof("Successfully extracted the features!")
	return nil
}

// legacyDim is axis i of the blob's legacy 4-axis shape (1 past its axes).
func legacyDim(b *blob.Blob[float32], i int) *int32 {
	v, _ := b.LegacyShape(i)
	return proto.Int32(int32(v))
}
