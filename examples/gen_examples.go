//go:build ignore

// Command gen_examples writes the small data sets of examples/ssd and
// examples/tsn (run from the repository root: go run examples/gen_examples.go):
// PNG images with one coloured box each and their VOC XML annotations,
// and folders of JPEG video frames.
package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	ssd()
	tsn()
}

func write(path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// ssd writes 16 images of 48 x 48 with a red "square" or a green "bar".
func ssd() {
	rng := rand.New(rand.NewPCG(1, 2))
	var list strings.Builder
	for i := range 16 {
		name, col := "square", color.RGBA{220, 40, 40, 255}
		w, h := 12+rng.IntN(12), 12+rng.IntN(12)
		if i%2 == 1 {
			name, col = "bar", color.RGBA{40, 200, 60, 255}
			w, h = 28+rng.IntN(12), 6+rng.IntN(4)
		}
		x, y := rng.IntN(48-w+1), rng.IntN(48-h+1)
		img := image.NewRGBA(image.Rect(0, 0, 48, 48))
		for p := range img.Pix {
			img.Pix[p] = 250
		}
		for r := y; r < y+h; r++ {
			for c := x; c < x+w; c++ {
				img.Set(c, r, col)
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			log.Fatal(err)
		}
		write(fmt.Sprintf("examples/ssd/images/%02d.png", i), b.Bytes())
		xml := fmt.Sprintf("<annotation>\n  <filename>%02d.png</filename>\n  <size><width>48</width><height>48</height><depth>3</depth></size>\n"+
			"  <object><name>%s</name><difficult>0</difficult><bndbox><xmin>%d</xmin><ymin>%d</ymin><xmax>%d</xmax><ymax>%d</ymax></bndbox></object>\n</annotation>\n",
			i, name, x, y, x+w, y+h)
		write(fmt.Sprintf("examples/ssd/annotations/%02d.xml", i), []byte(xml))
		fmt.Fprintf(&list, "images/%02d.png annotations/%02d.xml\n", i, i)
	}
	write("examples/ssd/trainval.txt", []byte(list.String()))
}

// tsn writes two videos of 9 frames of 96 x 80.
func tsn() {
	var list strings.Builder
	for v := range 2 {
		for f := 1; f <= 9; f++ {
			img := image.NewRGBA(image.Rect(0, 0, 96, 80))
			for p := range img.Pix {
				img.Pix[p] = byte(p*(v+1)/7 + 20*f)
			}
			var b bytes.Buffer
			if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
				log.Fatal(err)
			}
			write(fmt.Sprintf("examples/tsn/frames/video%d/img_%05d.jpg", v, f), b.Bytes())
		}
		fmt.Fprintf(&list, "examples/tsn/frames/video%d 9 %d\n", v, v)
	}
	write("examples/tsn/videos.txt", []byte(list.String()))
}
