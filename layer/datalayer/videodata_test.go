package datalayer_test

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeVideos writes frame folders v0, v1, ... of n frames each, frame f
// of video v a flat grey image of value 10*v+f (flow: x frames that, y
// frames 100 more), and the list file.
func writeVideos(t *testing.T, videos, frames int, flow bool) string {
	t.Helper()
	dir := t.TempDir()
	var list strings.Builder
	for v := range videos {
		vd := filepath.Join(dir, fmt.Sprintf("v%d", v))
		if err := os.MkdirAll(vd, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 1; f <= frames; f++ {
			write := func(name string, value int) {
				img := image.NewGray(image.Rect(0, 0, 6, 4))
				for i := range img.Pix {
					img.Pix[i] = byte(value)
				}
				if err := os.WriteFile(filepath.Join(vd, name), encodePNG(t, img), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if flow {
				write(fmt.Sprintf("flow_x_%05d.png", f), 10*v+f)
				write(fmt.Sprintf("flow_y_%05d.png", f), 100+10*v+f)
			} else {
				write(fmt.Sprintf("img_%05d.png", f), 10*v+f)
			}
		}
		fmt.Fprintf(&list, "%s %d %d\n", vd, frames, 7+v)
	}
	return writeTemp(t, "videos.txt", list.String())
}

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// planeValues returns the value of each plane of item i (the planes are
// flat).
func planeValues(d []float32, i, planes, size int) []float32 {
	var out []float32
	for p := range planes {
		out = append(out, d[(i*planes+p)*size])
	}
	return out
}

// In TEST the segments' runs sit in their middles: 12 frames in 3
// segments of 4, runs of 2 start at frames 2, 6 and 10.
func TestVideoDataRGB(t *testing.T) {
	list := writeVideos(t, 2, 12, false)
	l, top := setUpSource[float32](t, fmt.Sprintf(`type: "VideoData" phase: TEST video_data_param { source: "%s" batch_size: 3 num_segments: 3 new_length: 2
		modality: RGB grayscale: true name_pattern: "img_%%05d.png" }`, list), 1, 2)
	if got := top[0].ShapeString(); got != "3 6 4 6 (432)" {
		t.Fatalf("data %s, want 3 x 6 (segments x length) x 4 x 6", got)
	}
	b := batches(t, l, top, 1)[0]
	for i, v := range []int{0, 1, 0} {
		want := []float32{2, 3, 6, 7, 10, 11}
		for k := range want {
			want[k] += float32(10 * v)
		}
		if got := planeValues(b[0], i, 6, 24); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("item %d (video %d): frames %v, want %v", i, v, got, want)
		}
	}
	if got := fmt.Sprint(b[1]); got != "[7 8 7]" {
		t.Errorf("labels %v", got)
	}
}

// In TRAIN each run starts at random inside its segment; colour frames
// give three planes each; the transform's crop applies to the stack.
func TestVideoDataTrainRandomRuns(t *testing.T) {
	list := writeVideos(t, 1, 12, false)
	l, top := setUpSource[float32](t, fmt.Sprintf(`type: "VideoData" phase: TRAIN video_data_param { source: "%s" batch_size: 8 num_segments: 3 new_length: 2
		modality: RGB name_pattern: "img_%%05d.png" } transform_param { crop_size: 4 mean_value: 1 mean_value: 2 mean_value: 3 }`, list), 2, 2)
	if got := top[0].ShapeString(); got != "8 18 4 4 (2304)" {
		t.Fatalf("data %s", got)
	}
	starts := map[float32]bool{}
	for i := range 8 {
		got := planeValues(batches(t, l, top, 1)[0][0], i, 18, 16)
		for s := range 3 {
			first := got[6*s] + 1 // plane 0 of the run's first frame, less mean 1
			for k := range 6 {
				if want := first + float32(k/3) - float32(k%3+1); got[6*s+k] != want {
					t.Fatalf("item %d segment %d: planes %v", i, s, got[6*s:6*s+6])
				}
			}
			if lo := float32(4*s + 1); first < lo || first > lo+2 {
				t.Fatalf("item %d segment %d starts at frame %v, outside %v..%v", i, s, first, lo, lo+2)
			}
			starts[first-float32(4*s)] = true
		}
	}
	if len(starts) < 2 {
		t.Errorf("runs always start at the same place: %v", starts)
	}
}

// Flow stacks x and y planes per frame; with TSN's is_flow a mirrored
// stack's x planes are inverted.
func TestVideoDataFlowMirror(t *testing.T) {
	list := writeVideos(t, 1, 3, true)
	l, top := setUpSource[float32](t, fmt.Sprintf(`type: "VideoData" phase: TEST video_data_param { source: "%s" batch_size: 16 num_segments: 1 new_length: 3
		modality: FLOW name_pattern: "flow_%%c_%%05d.png" } transform_param { mirror: true is_flow: true }`, list), 3, 2)
	b := batches(t, l, top, 1)[0]
	seen := map[bool]bool{}
	for i := range 16 {
		got := planeValues(b[0], i, 6, 24)
		plain, inverted := fmt.Sprint([]float32{1, 101, 2, 102, 3, 103}), fmt.Sprint([]float32{254, 101, 253, 102, 252, 103})
		switch fmt.Sprint(got) {
		case plain:
			seen[false] = true
		case inverted:
			seen[true] = true
		default:
			t.Fatalf("item %d: planes %v, want %s or, mirrored, %s", i, got, plain, inverted)
		}
	}
	if !seen[true] || !seen[false] {
		t.Errorf("mirrored and plain stacks: %v", seen)
	}
}

func TestVideoDataErrors(t *testing.T) {
	list := writeVideos(t, 1, 4, false)
	for _, c := range []struct{ param, want string }{
		{`num_segments: 1 new_length: 1 name_pattern: "img_%05d.png" video_type: VIDEO video_file: "a.mp4"`, "NVCaffe"},
		{`num_segments: 1 new_length: 5 name_pattern: "img_%05d.png" modality: RGB`, ""},
		{`num_segments: 1 new_length: 1 name_pattern: "img.png" modality: RGB`, "name_pattern"},
		{`num_segments: 1 new_length: 1 modality: RGB`, "v0/image_000"}, // the default pattern
	} {
		text := fmt.Sprintf(`type: "VideoData" phase: TRAIN video_data_param { source: "%s" batch_size: 1 %s }`, list, c.param)
		if c.want == "" {
			// A run longer than the video starts at frame 1 and reads past
			// its end: the missing frame is named.
			c.want = "img_00005.png"
		}
		wantError(t, c.param, setUpError(t, text, 2), c.want)
	}
}
