// Command mkjpeg writes synthetic JPEG images and a convert_imageset list
// for the GPU data check (tools/gpu/caffenet_jpeg.sh): smooth colour
// gradients with noise, so that they compress and decode like photographs
// rather than like flat colour or pure noise.
//
//	go run ./tools/gpu/mkjpeg -n 2048 -size 256 -dir /tmp/jpeg/img -list /tmp/jpeg/list.txt
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("n", 2048, "images to write")
	size := flag.Int("size", 256, "their side in pixels")
	dir := flag.String("dir", "img", "the directory to write them to")
	list := flag.String("list", "list.txt", "the list file to write (name label)")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	lf, err := os.Create(*list)
	if err != nil {
		log.Fatal(err)
	}
	defer lf.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range *n {
		img := image.NewRGBA(image.Rect(0, 0, *size, *size))
		fx, fy, phase := rng.Float64()*0.05, rng.Float64()*0.05, rng.Float64()*6
		for y := range *size {
			for x := range *size {
				v := func(k float64) uint8 {
					s := 127 + 100*math.Sin(fx*float64(x)*k+fy*float64(y)+phase+k) + 20*rng.NormFloat64()
					return uint8(max(0, min(255, s)))
				}
				img.Set(x, y, color.RGBA{v(1), v(1.7), v(2.3), 255})
			}
		}
		name := fmt.Sprintf("%05d.jpg", i)
		f, err := os.Create(filepath.Join(*dir, name))
		if err != nil {
			log.Fatal(err)
		}
		if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 90}); err != nil {
			log.Fatal(err)
		}
		f.Close()
		fmt.Fprintf(lf, "%s %d\n", name, i%1000)
	}
}
