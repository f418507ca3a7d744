package glog

import (
	"bytes"
	"log/slog"
	"regexp"
	"testing"
)

func TestFormat(t *testing.T) {
	var buf bytes.Buffer
	prev := SetOutput(&buf)
	defer SetOutput(prev)
	Infof("Iteration %d, loss = %g", 100, 0.25)
	Warningf("careful")
	// The shape Caffe's tools/extra/parse_log.py and extract_seconds.py read.
	re := regexp.MustCompile(`^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ glog_test\.go:\d+\] Iteration 100, loss = 0\.25\nW\d{4} .*\] careful\n$`)
	if !re.MatchString(buf.String()) {
		t.Errorf("log lines not in glog format:\n%s", buf.String())
	}
}

// The library's lines reach the command through Handler: the same format,
// the library's file and line, slog's Debug and Info as I.
func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewHandler(&buf))
	l.Debug("Creating Layer conv1")
	l.Info("Iteration 100, loss = 0.25")
	l.Warn("careful", "layer", "conv1")
	l.WithGroup("g").With("a", 1).Error("bad", "b", "x")
	re := regexp.MustCompile(`^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ glog_test\.go:\d+\] Creating Layer conv1\n` +
		`I\d{4} .* glog_test\.go:\d+\] Iteration 100, loss = 0\.25\n` +
		`W\d{4} .*\] careful layer=conv1\n` +
		`E\d{4} .*\] bad g\.a=1 g\.b=x\n$`)
	if !re.MatchString(buf.String()) {
		t.Errorf("log lines not in glog format:\n%s", buf.String())
	}
}
