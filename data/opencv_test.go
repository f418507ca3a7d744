package data

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// opencvScript applies OpenCV's operations to the raw images the test
// writes: argv is the directory, then one job per argument,
// "resize:<in>:<c>:<h>:<w>:<nh>:<nw>:<mode>:<out>", "bgr2hsv:<in>:<n>:<out>",
// "hsv2bgr:<in>:<n>:<out>" or "imdecode:<in>:<color|gray>:<out>" (an
// encoded image decoded as Caffe's ReadImageToCVMat does), images
// interleaved (OpenCV's layout).
const opencvScript = `
import sys, cv2, numpy as np
d = sys.argv[1]
modes = {"LINEAR": cv2.INTER_LINEAR, "AREA": cv2.INTER_AREA, "NEAREST": cv2.INTER_NEAREST,
         "CUBIC": cv2.INTER_CUBIC, "LANCZOS4": cv2.INTER_LANCZOS4}
for job in sys.argv[2:]:
    f = job.split(":")
    src = np.fromfile(d + "/" + f[1], dtype=np.uint8)
    if f[0] == "resize":
        c, h, w, nh, nw = map(int, f[2:7])
        img = src.reshape(h, w, c) if c > 1 else src.reshape(h, w)
        out = cv2.resize(img, (nw, nh), interpolation=modes[f[7]])
        out.tofile(d + "/" + f[8])
    elif f[0] == "imdecode":
        flag = cv2.IMREAD_COLOR if f[2] == "color" else cv2.IMREAD_GRAYSCALE
        cv2.imdecode(src, flag).tofile(d + "/" + f[3])
    else:
        n = int(f[2])
        img = src.reshape(1, n, 3)
        code = cv2.COLOR_BGR2HSV if f[0] == "bgr2hsv" else cv2.COLOR_HSV2BGR
        cv2.cvtColor(img, code).tofile(d + "/" + f[3])
`

// opencv runs opencvScript with Debian's python3-opencv, or skips.
func opencv(t *testing.T, dir string, jobs []string) {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import cv2").Run(); err != nil {
		if os.Getenv("GOCAFFE_REQUIRE_OPENCV") != "" { // CI: a skip would hide the check
			t.Fatalf("python3-opencv is needed (GOCAFFE_REQUIRE_OPENCV is set): %v", err)
		}
		t.Skip("no python3-opencv (apt-get install python3-opencv) to compare with")
	}
	cmd := exec.Command(py, append([]string{"-c", opencvScript, dir}, jobs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("OpenCV: %v\n%s", err, out)
	}
}

// interleave turns planes into OpenCV's pixel-interleaved layout, and
// planar back.
func interleave(p []byte, c int) []byte {
	n := len(p) / c
	out := make([]byte, len(p))
	for i := range n {
		for k := range c {
			out[i*c+k] = p[k*n+i]
		}
	}
	return out
}

// TestAgainstOpenCV compares the augmentation's pixel operations with
// OpenCV's own (which SSD's Caffe calls): every interpolation of
// resize_param on shrinking, enlarging and mixed sizes, and the 8-bit HSV
// conversions of the hue and saturation distortions. NEAREST, AREA when
// shrinking and both HSV conversions must be exact; the rest within a grey
// level (OpenCV computes them in fixed point, and its vectorised loops
// round differently from its scalar ones).
func TestAgainstOpenCV(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	const c, h, w = 3, 37, 53
	planes := make([]byte, c*h*w)
	for i := range planes {
		x, y := i%w, i/w%h
		planes[i] = byte((x*5 + y*3 + i/(w*h)*70 + rng.IntN(40)) % 256)
	}
	if err := os.WriteFile(filepath.Join(dir, "img"), interleave(planes, c), 0o644); err != nil {
		t.Fatal(err)
	}
	type resizeJob struct {
		mode   caffepb.ResizeParameter_InterpMode
		nh, nw int
	}
	var jobs []string
	var resizes []resizeJob
	for _, m := range []caffepb.ResizeParameter_InterpMode{caffepb.ResizeParameter_LINEAR, caffepb.ResizeParameter_NEAREST,
		caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4, caffepb.ResizeParameter_AREA} {
		for _, sz := range [][2]int{{18, 26}, {12, 17}, {80, 120}, {30, 90}} {
			r := resizeJob{m, sz[0], sz[1]}
			resizes = append(resizes, r)
			jobs = append(jobs, fmt.Sprintf("resize:img:%d:%d:%d:%d:%d:%s:r%d", c, h, w, r.nh, r.nw, m, len(resizes)-1))
		}
	}
	// Every 8-bit BGR colour on a grid, and every HSV value OpenCV makes.
	var bgr, hsv []byte
	for b := 0; b < 256; b += 5 {
		for g := 0; g < 256; g += 7 {
			for r := 0; r < 256; r += 3 {
				bgr = append(bgr, byte(b), byte(g), byte(r))
			}
		}
	}
	for hh := 0; hh < 180; hh++ {
		for s := 0; s < 256; s += 5 {
			for v := 0; v < 256; v += 5 {
				hsv = append(hsv, byte(hh), byte(s), byte(v))
			}
		}
	}
	for name, b := range map[string][]byte{"bgr": bgr, "hsv": hsv} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobs = append(jobs, fmt.Sprintf("bgr2hsv:bgr:%d:bgr.hsv", len(bgr)/3), fmt.Sprintf("hsv2bgr:hsv:%d:hsv.bgr", len(hsv)/3))
	opencv(t, dir, jobs)

	var rs Resampler
	var report []string
	for i, r := range resizes {
		want, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("r%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Resize(r.mode, nil, planes, c, h, w, r.nh, r.nw)
		if err != nil {
			t.Fatal(err)
		}
		worst, off := maxDiff(interleave(got, c), want)
		report = append(report, fmt.Sprintf("%v %dx%d: %d off, largest %d", r.mode, r.nh, r.nw, off, worst))
		// OpenCV's vectorised 8-bit paths round some pixels one level off
		// its reference code, which LINEAR follows; NEAREST has nothing
		// to round.
		limit := 1
		if r.mode == caffepb.ResizeParameter_NEAREST {
			limit = 0
		}
		if worst > limit {
			t.Errorf("%v to %dx%d: %d pixels differ from OpenCV's, by up to %d grey levels", r.mode, r.nh, r.nw, off, worst)
		}
	}
	wantHSV, _ := os.ReadFile(filepath.Join(dir, "bgr.hsv"))
	var gotHSV []byte
	for i := 0; i < len(bgr); i += 3 {
		h, s, v := bgrToHSV(bgr[i], bgr[i+1], bgr[i+2])
		gotHSV = append(gotHSV, h, s, v)
	}
	wantBGR, _ := os.ReadFile(filepath.Join(dir, "hsv.bgr"))
	var gotBGR []byte
	for i := 0; i < len(hsv); i += 3 {
		b, g, r := hsvToBGR(hsv[i], hsv[i+1], hsv[i+2])
		gotBGR = append(gotBGR, b, g, r)
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"BGR2HSV", gotHSV, wantHSV}, {"HSV2BGR", gotBGR, wantBGR}} {
		worst, off := maxDiff(c.got, c.want)
		report = append(report, fmt.Sprintf("%s: %d of %d values off, largest %d", c.name, off, len(c.want), worst))
		if worst > 0 {
			t.Errorf("%s: %d values differ from OpenCV's, by up to %d", c.name, off, worst)
		}
	}
	t.Logf("against OpenCV:\n%s", strings.Join(report, "\n"))
}

func maxDiff(a, b []byte) (worst, off int) {
	if len(a) != len(b) {
		return 256, len(b)
	}
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		if d > 0 {
			off++
		}
		worst = max(worst, d)
	}
	return worst, off
}
