package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/onnx"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// runExportONNX writes a trained Caffe net as an ONNX model (see package
// onnx): the net's TEST phase, data layers as inputs, training-only layers
// left out and listed.
func runExportONNX(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export_onnx", stderr)
	model := fs.String("model", "", "the net prototxt (deploy or train_val; its TEST phase is exported)")
	weights := fs.String("weights", "", "the trained weights (.caffemodel or Caffe's .h5); without it the fillers' values are exported")
	out := fs.String("o", "", "the ONNX file to write")
	opset := fs.Int("opset", onnx.DefaultOpset, fmt.Sprintf("the ONNX opset, %d to %d", onnx.MinOpset, onnx.MaxOpset))
	batch := fs.String("batch", "", "the inputs' batch size: a number, or 'dynamic' for a symbolic batch axis; empty keeps the net's")
	var nf netFlags
	nf.register(fs)
	setUsage(fs, stderr, "gocaffe export_onnx -model deploy.prototxt -weights x.caffemodel -o x.onnx [-opset N] [-batch N|dynamic]",
		"Exports a Caffe net and its weights as an ONNX model that computes the same outputs.")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *model == "" || *out == "" {
		return usageError(fs, stderr, "need -model and -o")
	}
	// The net is built twice (the second time with Input layers in place of
	// the data layers); its warnings matter, its build log would only
	// repeat.
	quiet := slog.New(warningsOnly{glog.NewHandler(nil)})
	opts := onnx.Options{Opset: *opset, State: nf.state(caffepb.Phase_TEST), Logger: quiet, SkipUnknownFields: nf.skipUnknown}
	switch *batch {
	case "":
	case "dynamic":
		opts.DynamicBatch = true
	default:
		n, err := strconv.Atoi(*batch)
		if err != nil || n < 1 {
			return fmt.Errorf("-batch %q: want a positive number or 'dynamic'", *batch)
		}
		opts.Batch = n
	}
	if *weights == "" {
		glog.Warningf("No -weights: exporting the values of the net's fillers, not a trained net")
	}
	m, err := onnx.ExportFiles(*model, *weights, opts)
	if err != nil {
		return err
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	if err := protoio.WriteFileAtomic(*out, data); err != nil {
		return err
	}
	for _, d := range m.Dropped {
		glog.Infof("Left out layer %s", d)
	}
	glog.Infof("Wrote %s: ONNX opset %d, %d nodes, inputs %v, outputs %v (%d bytes)",
		*out, m.Proto.GetOpsetImport()[0].GetVersion(), len(m.Proto.GetGraph().GetNode()), m.Inputs, m.Outputs, len(data))
	return nil
}

// warningsOnly passes on a handler's warnings and errors only.
type warningsOnly struct{ slog.Handler }

func (h warningsOnly) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h warningsOnly) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h warningsOnly) WithAttrs(a []slog.Attr) slog.Handler {
	return warningsOnly{h.Handler.WithAttrs(a)}
}

func (h warningsOnly) WithGroup(name string) slog.Handler {
	return warningsOnly{h.Handler.WithGroup(name)}
}
