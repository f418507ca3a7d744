package glog

import (
	"bytes"
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
