package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// runPlot draws a training log's curves (what parse_log reads: train and
// test outputs above, the learning rate below) into a PNG or SVG file,
// in place of Caffe's plot_training_log.py.
func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plot", stderr)
	out := fs.String("o", "", "the image to write: .png or .svg")
	x := fs.String("x", "iters", "the horizontal axis: iters or seconds")
	width := fs.Float64("width", 20, "image width in centimetres")
	height := fs.Float64("height", 16, "image height in centimetres")
	setUsage(fs, stderr, "gocaffe plot [-x iters|seconds] -o curves.png|curves.svg LOGFILE",
		"Draws the loss, the other train and test outputs, and the learning rate of a\n"+
			"Caffe-format training log (gocaffe's or Caffe's).")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		return usageError(fs, stderr, "need a log file and -o")
	}
	xcol := map[string]string{"iters": "NumIters", "seconds": "Seconds"}[*x]
	if xcol == "" {
		return fmt.Errorf("-x %q: want iters or seconds", *x)
	}
	train, test, err := parseTrainingLog(pos[0])
	if err != nil {
		return err
	}
	if len(train.rows) == 0 && len(test.rows) == 0 {
		return fmt.Errorf("%s: no train or test outputs to plot", pos[0])
	}
	outputs, lr, err := logPlots(train, test, xcol, filepath.Base(pos[0]))
	if err != nil {
		return err
	}
	return savePlots(*out, vg.Length(*width)*vg.Centimeter, vg.Length(*height)*vg.Centimeter, outputs, lr)
}

// logPlots makes the two panels: every output column of both tables, and
// the learning rate from the train table (the test table's when there is
// no training output).
func logPlots(train, test *logTable, xcol, title string) (outputs, lr *plot.Plot, err error) {
	outputs, lr = plot.New(), plot.New()
	outputs.Title.Text = title
	outputs.Y.Label.Text = "output"
	lr.Y.Label.Text = "learning rate"
	for _, p := range []*plot.Plot{outputs, lr} {
		p.X.Label.Text = map[string]string{"NumIters": "iteration", "Seconds": "seconds"}[xcol]
		p.Add(plotter.NewGrid())
	}
	outputs.Legend.Top, lr.Legend.Top = true, true
	series := 0
	for _, t := range []struct {
		prefix string
		table  *logTable
	}{{"train ", train}, {"test ", test}} {
		if len(t.table.rows) == 0 {
			continue
		}
		for _, col := range t.table.rows[0].names[3:] {
			if err := addLine(outputs, t.table, xcol, col, t.prefix+col, series); err != nil {
				return nil, nil, err
			}
			series++
		}
	}
	rates := train
	if len(rates.rows) == 0 {
		rates = test
	}
	if err := addLine(lr, rates, xcol, "LearningRate", "learning rate", 0); err != nil {
		return nil, nil, err
	}
	return outputs, lr, nil
}

// addLine adds the column col of t against xcol as a line with points.
func addLine(p *plot.Plot, t *logTable, xcol, col, name string, i int) error {
	var xys plotter.XYs
	for _, r := range t.rows {
		y, ok := r.values[col]
		if !ok || y != y { // missing or NaN
			continue
		}
		xys = append(xys, plotter.XY{X: r.values[xcol], Y: y})
	}
	if len(xys) == 0 {
		return nil
	}
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plotting %s: %w", name, err)
	}
	l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
	pts.Shape = plotutil.Shape(i)
	p.Add(l, pts)
	p.Legend.Add(name, l, pts)
	return nil
}

// savePlots stacks the panels (outputs three quarters, learning rate one)
// into one PNG or SVG image.
func savePlots(path string, w, h vg.Length, outputs, lr *plot.Plot) error {
	canvas, write, err := imageCanvas(path, w, h, 96)
	if err != nil {
		return err
	}
	top, bottom := canvas, canvas
	split := canvas.Min.Y + (canvas.Max.Y-canvas.Min.Y)/4
	top.Min.Y, bottom.Max.Y = split, split
	outputs.Draw(top)
	lr.Draw(bottom)
	return writeImage(path, write)
}

// imageCanvas makes a w x h canvas for a picture that path's extension
// says is a PNG (at dpi, white background) or an SVG, and the function
// that writes it out.
func imageCanvas(path string, w, h vg.Length, dpi int) (draw.Canvas, func(io.Writer) (int64, error), error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		return draw.New(img), vgimg.PngCanvas{Canvas: img}.WriteTo, nil
	case ".svg":
		s := vgsvg.New(w, h)
		return draw.New(s), s.WriteTo, nil
	}
	return draw.Canvas{}, nil, fmt.Errorf("-o %s: want a .png or .svg file", path)
}

// writeImage writes a finished canvas to path.
func writeImage(path string, write func(io.Writer) (int64, error)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
