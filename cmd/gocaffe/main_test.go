package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUnknownCommand(t *testing.T) {
	code, _, stderr := runCmd("trian")
	if code == 0 || !strings.Contains(stderr, `unknown command "trian"`) || !strings.Contains(stderr, "device_query") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd(); code == 0 {
		t.Error("no command exited 0")
	}
}

func TestDeviceQueryNeedsGPU(t *testing.T) {
	code, _, stderr := runCmd("device_query")
	if code == 0 || !strings.Contains(stderr, "-gpu") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCmd("device_query", "-gpu", "x")
	if code != 1 || !strings.Contains(stderr, `"x" is not a device number`) {
		t.Errorf("bad -gpu: exit %d, stderr %q", code, stderr)
	}
}

func TestParseGPUs(t *testing.T) {
	three := func() (int, error) { return 3, nil }
	for in, want := range map[string][]int{"0": {0}, "1,2": {1, 2}, " 0 , 1": {0, 1}, "all": {0, 1, 2}} {
		got, err := parseGPUs(in, three)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseGPUs(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "a", "0,,1"} {
		if _, err := parseGPUs(bad, three); err == nil {
			t.Errorf("parseGPUs(%q) succeeded", bad)
		}
	}
}

// A missing required flag says which, after the flag list.
func TestMissingFlagSaysWhich(t *testing.T) {
	for cmd, want := range map[string]string{
		"test":  "gocaffe test: need -model and -weights",
		"time":  "gocaffe time: need -model",
		"train": "gocaffe train: need -solver",
	} {
		code, _, stderr := runCmd(cmd)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr ends %q; want 2 and %q", cmd, code, lastLines(stderr, 2), want)
		}
	}
}
