package net_test

import (
	"google.golang.org/protobuf/proto"

	"log/slog"
	"testing"

	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// A net and its layers log to Options.Logger, not to slog.Default(): the
// details of building at Debug, warnings at Warn, each line attributed to
// the library file that logs it.
func TestLogger(t *testing.T) {
	stray := logtest.CaptureDefault(t)
	var rec logtest.Recorder
	text := `name: "Logged"
layer { name: "data" type: "DummyData" top: "x" dummy_data_param { shape { dim: 1 dim: 1 dim: 4 dim: 4 } } }
layer { name: "conv" type: "Deconvolution" bottom: "x" top: "y"
  convolution_param { num_output: 1 kernel_size: 3 engine: CUDNN } }`
	opts := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, Logger: rec.Logger()}
	if _, err := net.New[float32](parseNet(t, text), opts); err != nil {
		t.Fatal(err)
	}
	rec.Expect(t,
		logtest.Line{Level: slog.LevelDebug, Message: "Creating Layer conv", File: "net.go"},
		logtest.Line{Level: slog.LevelDebug, Message: "Top shape: 1 1 6 6 (36)", File: "net.go"},
		logtest.Line{Level: slog.LevelWarn, Message: "Layer conv: engine CUDNN, but gocaffe has no cuDNN engine for Deconvolution layers; using Caffe's own engine", File: "engine.go"},
	)
	stray.ExpectNone(t, "slog.Default()")
}

// Without a logger a net logs to slog.Default().
func TestLoggerDefault(t *testing.T) {
	rec := logtest.CaptureDefault(t)
	build(t, tinyNet("", "", ""), caffepb.Phase_TRAIN)
	if _, ok := rec.Find("Network initialization done."); !ok {
		t.Errorf("slog.Default() got %d lines, none of them the end of the initialisation", len(rec.Lines()))
	}
}

// Weights that copy nothing (an empty file, or another net's) are
// legal, as in Caffe, but said, at warning level.
func TestNoWeightsCopiedWarns(t *testing.T) {
	for _, model := range []*caffepb.NetParameter{{}, {Layer: []*caffepb.LayerParameter{{Name: proto.String("other"), Blobs: []*caffepb.BlobProto{{}}}}}} {
		var rec logtest.Recorder
		opts := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, Logger: rec.Logger()}
		n, err := net.New[float32](parseNet(t, tinyNet("", "", "")), opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.CopyTrainedLayersFrom(model); err != nil {
			t.Fatal(err)
		}
		l, ok := rec.Find("No weights were copied")
		if !ok || l.Level != slog.LevelWarn {
			t.Errorf("model with %d layers: no warning that nothing was copied (%+v)", len(model.Layer), l)
		}
	}
}
