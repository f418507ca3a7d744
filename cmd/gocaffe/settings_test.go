package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/settings"
)

// resetSettings puts the command's settings back when the test ends.
func resetSettings(t *testing.T) {
	t.Cleanup(func() {
		config = settings.Settings{}
		cuda.SetCacheDir(settings.DefaultCacheDir)
	})
}

// A value a GOCAFFE_ variable does not take stops any command before it
// runs, with exit status 1 and a message naming the variable and its words.
func TestBadSettingStopsTheCommand(t *testing.T) {
	resetSettings(t)
	for _, c := range []struct{ name, value, words string }{
		{"GOCAFFE_BN", "fast", "own, rows or cudnn"},
		{"GOCAFFE_FUSED_UPDATE", "0", "on or off"},
		{"GOCAFFE_RENDEZVOUS_TIMEOUT", "300", "30s, 5m or 1h"},
	} {
		t.Setenv(c.name, c.value)
		code, stdout, stderr := runCmd("upgrade_net_proto_text", "in.prototxt", "out.prototxt")
		if code != 1 || stdout != "" || !strings.Contains(stderr, "gocaffe upgrade_net_proto_text: "+c.name+`="`+c.value+`"`) ||
			!strings.Contains(stderr, c.words) || !strings.Contains(stderr, "docs/configuration.md") {
			t.Errorf("%s=%s: exit %d, stderr %q", c.name, c.value, code, stderr)
		}
		t.Setenv(c.name, "")
	}
}

// The command reads its settings from the environment when it starts and
// hands them to every context it makes, the CPU's included; the kernel
// cache's directory goes to package cuda, the image cap to the data tools.
func TestSettingsFromTheEnvironment(t *testing.T) {
	resetSettings(t)
	dir := t.TempDir()
	t.Setenv("GOCAFFE_GEMM", "own")
	t.Setenv("GOCAFFE_BN", "rows")
	t.Setenv("GOCAFFE_CUDA_CACHE", dir)
	t.Setenv("GOCAFFE_MAX_IMAGE_PIXELS", "34")
	if code, _, stderr := runCmd("upgrade_net_proto_text"); code != 2 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := settings.Settings{GEMM: settings.GEMMOwn, BatchNorm: settings.BatchNormRows, CUDACache: settings.CacheDir(dir), MaxImagePixels: 34}
	if config != want {
		t.Errorf("settings %+v, want %+v", config, want)
	}
	if cuda.CacheDir() != dir {
		t.Errorf("kernel cache %q, want %q", cuda.CacheDir(), dir)
	}
	var nf netFlags
	ctx, err := nf.context()
	if err != nil || ctx.OnGPU() || ctx.Settings() != want {
		t.Errorf("the CPU's context: %v, %v, settings %+v", ctx, err, ctx.Settings())
	}
	img := filepath.Join(dir, "small.png")
	if err := os.WriteFile(img, badinput.PNGBomb(7, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readImage(img); err == nil || !strings.Contains(err.Error(), "over the limit of 34 pixels") {
		t.Errorf("a 7x5 image under GOCAFFE_MAX_IMAGE_PIXELS=34: %v", err)
	}
	t.Setenv("GOCAFFE_MAX_IMAGE_PIXELS", "")
	runCmd("upgrade_net_proto_text")
	if _, err := readImage(img); err != nil {
		t.Errorf("a 7x5 image under the default cap: %v", err)
	}
}
