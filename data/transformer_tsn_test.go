package data

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func TestTSNCropSizesAndOffsets(t *testing.T) {
	got := fmt.Sprint(tsnCropSizes(256, 340, 224, 1, []float32{1, .875, .75, .66}))
	want := "[[256 256] [256 224] [224 256] [224 224] [224 192] [192 224] [192 192] [192 168] [168 192] [168 168]]"
	if got != want {
		t.Errorf("crop sizes %s, want %s", got, want)
	}
	if got := fmt.Sprint(tsnFixedOffsets(256, 340, 224, 224, false)); got != "[[0 0] [0 116] [32 0] [32 116] [16 58]]" {
		t.Errorf("fixed offsets %s", got)
	}
	if n := len(tsnFixedOffsets(256, 340, 224, 224, true)); n != 13 {
		t.Errorf("more_fix_crop gives %d places, want 13", n)
	}
}

// A multi-scale fixed crop is one of TSN's windows resized to the crop
// size: the output must equal, for one of the candidate sizes and places
// (and the mirror coin), the window resized bilinearly.
func TestTSNMultiScaleCrop(t *testing.T) {
	const c, h, w, crop = 2, 40, 52, 32
	raw := DatumRecord{Channels: c, Height: h, Width: w, Data: make([]byte, c*h*w)}
	for i := range raw.Data {
		raw.Data[i] = byte(i*7 + i/w*3)
	}
	p := &caffepb.TransformationParameter{CropSize: ptr[uint32](crop), Mirror: ptr(true), MultiScale: ptr(true), FixCrop: ptr(true),
		MoreFixCrop: ptr(true), MaxDistort: ptr[int32](1), MeanValue: []float32{10}}
	tf, err := NewTransformer[float32](p, caffepb.Phase_TRAIN, 5)
	if err != nil {
		t.Fatal(err)
	}
	var rs Resizer
	resized := 0
	for trial := range 20 {
		out := make([]float32, c*crop*crop)
		if err := tf.TransformRecord(&raw, out); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, sz := range tsnCropSizes(h, w, crop, 1, []float32{1, .875, .75, .66}) {
			for _, off := range tsnFixedOffsets(h, w, sz[0], sz[1], true) {
				for _, mirror := range []bool{false, true} {
					want := make([]float32, 0, len(out))
					for ch := range c {
						win := make([]byte, 0, sz[0]*sz[1])
						for y := range sz[0] {
							r := (ch*h+off[0]+y)*w + off[1]
							win = append(win, raw.Data[r:r+sz[1]]...)
						}
						px, _ := rs.Resize(nil, win, 1, sz[0], sz[1], crop, crop)
						for y := range crop {
							row := px[y*crop : (y+1)*crop]
							for x := range crop {
								v := row[x]
								if mirror {
									v = row[crop-1-x]
								}
								want = append(want, float32(v)-10)
							}
						}
					}
					if slices.Equal(out, want) {
						found = true
						if sz != [2]int{crop, crop} {
							resized++
						}
					}
				}
			}
		}
		if !found {
			t.Fatalf("trial %d: the output is none of TSN's windows", trial)
		}
	}
	if resized == 0 {
		t.Error("no trial resized a window")
	}
}

// Mirroring a flow stack inverts its horizontal (even) channels; a mean
// value per group of channels repeats across the stack.
func TestTSNFlowMirrorAndMeanGroups(t *testing.T) {
	raw := DatumRecord{Channels: 4, Height: 1, Width: 3, Data: []byte{1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33}}
	p := &caffepb.TransformationParameter{Mirror: ptr(true), IsFlow: ptr(true), MeanValue: []float32{1, 2}}
	tf, err := NewTransformer[float32](p, caffepb.Phase_TRAIN, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[bool]bool{}
	for range 16 {
		out := make([]float32, 12)
		if err := tf.TransformRecord(&raw, out); err != nil {
			t.Fatal(err)
		}
		mirrored := out[3] == 13-2
		seen[mirrored] = true
		want := []float32{0, 1, 2, 9, 10, 11, 20, 21, 22, 29, 30, 31}
		if mirrored {
			want = []float32{255 - 3 - 1, 255 - 2 - 1, 255 - 1 - 1, 11, 10, 9, 255 - 23 - 1, 255 - 22 - 1, 255 - 21 - 1, 31, 30, 29}
		}
		if !slices.Equal(out, want) {
			t.Fatalf("mirrored %v: %v, want %v", mirrored, out, want)
		}
	}
	if !seen[true] || !seen[false] {
		t.Errorf("mirror coin never fell both ways: %v", seen)
	}
}

func ptr[E any](v E) *E { return &v }
