package main

import (
	"fmt"
	"image/color"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/sysmem"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// runDraw draws a net, as Caffe's python/draw_net.py: layers as boxes
// (type and main parameters), blobs as octagons (with their shapes when
// the net can be built here: a Data layer needs its database), arrows
// bottom -> layer -> top. A blob a layer writes in place gets a new node of
// the same name after that layer, so the picture stays a layered graph.
//
// The layout and drawing are our own, in Go (gonum/plot's vg canvases for
// SVG and PNG): one binary, no Graphviz needed, the same picture
// everywhere. -o x.dot writes Graphviz's DOT instead, for those who want
// dot's layout.
func runDraw(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("draw", stderr)
	model := fs.String("model", "", "the net prototxt")
	out := fs.String("o", "", "the picture to write: .svg, .png, or .dot (Graphviz)")
	rankdir := fs.String("rankdir", "TB", "the direction of the data flow: TB (top to bottom) or LR (left to right)")
	phase := fs.String("phase", "TRAIN", "the phase whose layers are drawn: TRAIN or TEST")
	setUsage(fs, stderr, "gocaffe draw -model net.prototxt -o net.svg|net.png|net.dot [-rankdir TB|LR] [-phase TRAIN|TEST]",
		"Draws a net's layers and blobs.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *model == "" || *out == "" || len(pos) != 0 {
		return usageError(fs, stderr, "need -model and -o")
	}
	if *rankdir != "TB" && *rankdir != "LR" {
		return fmt.Errorf("-rankdir %q: want TB or LR", *rankdir)
	}
	ph, ok := caffepb.Phase_value[strings.ToUpper(*phase)]
	if !ok {
		return fmt.Errorf("-phase %q: want TRAIN or TEST", *phase)
	}
	g, err := netGraph(*model, caffepb.Phase(ph))
	if err != nil {
		return err
	}
	if strings.EqualFold(filepath.Ext(*out), ".dot") {
		return os.WriteFile(*out, []byte(g.dot(*rankdir)), 0o666)
	}
	return g.render(*out, *rankdir == "LR", nil)
}

// drawNode is a layer or a blob of the picture.
type drawNode struct {
	lines []string
	text  string // lines as drawn: joined, each clipped (clipLine)
	layer bool
	fill  color.Color
	rank  int
	// laid out: centre and size, in points
	x, y, w, h vg.Length
}

type drawGraph struct {
	name  string
	nodes []*drawNode
	edges [][2]int // from, to
}

// netGraph reads the net, keeps the phase's layers, and makes the nodes
// and edges; blob shapes come from building the net, when that works.
func netGraph(model string, phase caffepb.Phase) (*drawGraph, error) {
	p, err := netproto.ReadNetParamsFromTextFile(model, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	return netGraphOf(p, phase)
}

// netGraphOf is netGraph of a NetParameter (upgraded already).
func netGraphOf(p *caffepb.NetParameter, phase caffepb.Phase) (*drawGraph, error) {
	p = proto.Clone(p).(*caffepb.NetParameter)
	p.State = &caffepb.NetState{Phase: phase.Enum()}
	layers, err := netproto.FilterNet(p)
	if err != nil {
		return nil, err
	}
	shapes := map[string]string{}
	if n, err := net.New[float32](p, net.Options{Logger: slog.New(slog.DiscardHandler)}); err == nil {
		for i, name := range n.BlobNames() {
			shapes[name] = n.Blobs()[i].ShapeString()
		}
		n.Close()
	}
	g := &drawGraph{name: p.GetName()}
	current := map[string]int{} // blob name -> its latest node
	add := func(n *drawNode) int { g.nodes = append(g.nodes, n); return len(g.nodes) - 1 }
	for _, l := range layers {
		ln := add(&drawNode{lines: layerLabel(l), layer: true, fill: layerColour(l.GetType())})
		for _, b := range l.Bottom {
			src, ok := current[b]
			if !ok { // a blob no layer makes (an old-style net input)
				src = add(blobNode(b, shapes))
				current[b] = src
			}
			g.edges = append(g.edges, [2]int{src, ln})
			g.nodes[ln].rank = max(g.nodes[ln].rank, g.nodes[src].rank+1)
		}
		for _, t := range l.Top {
			tn := add(blobNode(t, shapes))
			g.nodes[tn].rank = g.nodes[ln].rank + 1
			g.edges = append(g.edges, [2]int{ln, tn})
			current[t] = tn
		}
	}
	return g, nil
}

func blobNode(name string, shapes map[string]string) *drawNode {
	lines := []string{name}
	if s, ok := shapes[name]; ok {
		lines = append(lines, s)
	}
	return &drawNode{lines: lines, fill: color.RGBA{0xe6, 0xe6, 0xe6, 0xff}}
}

// layerLabel is a layer's name, type and, for the common parametrised
// types, what draw_net shows of their parameters.
func layerLabel(l *caffepb.LayerParameter) []string {
	lines := []string{l.GetName(), "(" + l.GetType() + ")"}
	switch l.GetType() {
	case "Convolution", "Deconvolution":
		c := l.GetConvolutionParam()
		lines = append(lines, fmt.Sprintf("out %d, kernel %v, stride %v, pad %v", c.GetNumOutput(), orOne(c.GetKernelSize(), c.GetKernelH()), orOne(c.GetStride(), c.GetStrideH()), orZero(c.GetPad(), c.GetPadH())))
	case "Pooling":
		pp := l.GetPoolingParam()
		lines = append(lines, fmt.Sprintf("%v, kernel %d, stride %d", pp.GetPool(), pp.GetKernelSize()+pp.GetKernelH(), pp.GetStride()))
	case "InnerProduct":
		lines = append(lines, fmt.Sprintf("out %d", l.GetInnerProductParam().GetNumOutput()))
	}
	return lines
}

func orOne(v []uint32, h uint32) uint32 {
	if len(v) > 0 {
		return v[0]
	}
	if h > 0 {
		return h
	}
	return 1
}

func orZero(v []uint32, h uint32) uint32 {
	if len(v) > 0 {
		return v[0]
	}
	return h
}

// layerColour follows draw_net's: convolutions red, pooling orange, inner
// products violet, the rest blue.
func layerColour(typ string) color.Color {
	switch typ {
	case "Convolution", "Deconvolution":
		return color.RGBA{0xff, 0x50, 0x50, 0xff}
	case "Pooling":
		return color.RGBA{0xff, 0x99, 0x00, 0xff}
	case "InnerProduct":
		return color.RGBA{0xcc, 0x33, 0xff, 0xff}
	}
	return color.RGBA{0x64, 0x95, 0xed, 0xff}
}

// dot writes the graph in Graphviz's language.
func (g *drawGraph) dot(rankdir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n  rankdir=%s;\n", dotString([]string{g.name}, false), rankdir)
	for i, n := range g.nodes {
		shape := "octagon"
		if n.layer {
			shape = "record"
		}
		r, gr, bl, _ := n.fill.RGBA()
		fmt.Fprintf(&b, "  n%d [shape=%s, style=filled, fillcolor=\"#%02x%02x%02x\", label=%s];\n", i, shape, r>>8, gr>>8, bl>>8, dotString(n.lines, n.layer))
	}
	for _, e := range g.edges {
		fmt.Fprintf(&b, "  n%d -> n%d;\n", e[0], e[1])
	}
	b.WriteString("}\n")
	return b.String()
}

// dotString quotes lines as one DOT string, joined by Graphviz's line
// break (\n). Go's %q is not DOT's quoting: its escapes (\t, \x01, \u2028)
// mean nothing to Graphviz, and in a record's label the characters { } | <
// > are the record's own syntax, so a layer named "a|b" or "{x}" made
// Graphviz reject the file ("bad label format"). Here \ and " are escaped
// as DOT reads them, the record characters with a backslash when record
// is set, and control characters (which a name may hold) become spaces.
func dotString(lines []string, record bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, l := range lines {
		if i > 0 {
			b.WriteString(`\n`)
		}
		for _, r := range l {
			switch {
			case r == '\\' || r == '"' || (record && strings.ContainsRune("{}|<>", r)):
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case unicode.IsControl(r):
				b.WriteByte(' ')
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

const (
	drawDPI    = 144 // of PNG pictures
	drawMargin = vg.Length(12)
	drawPad    = vg.Length(6)
	drawGapIn  = vg.Length(14) // between nodes of a rank
	drawGapOut = vg.Length(26) // between ranks
)

// render lays the ranks out along the flow, nodes of a rank side by side,
// and draws to SVG or PNG (path's extension) in path, or in to when it is
// not nil.
func (g *drawGraph) render(path string, lr bool, to io.Writer) error {
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 9), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	ranks := 0
	for _, n := range g.nodes {
		ranks = max(ranks, n.rank+1)
		n.text = drawnText(n.lines)
		n.w = sty.Width(n.text) + 2*drawPad
		n.h = sty.Height(n.text) + 2*drawPad
	}
	// along: the flow axis; across: the other.
	along, across := make([]vg.Length, ranks), make([]vg.Length, ranks)
	size := func(n *drawNode) (a, c vg.Length) {
		if lr {
			return n.w, n.h
		}
		return n.h, n.w
	}
	for _, n := range g.nodes {
		a, c := size(n)
		along[n.rank] = max(along[n.rank], a)
		if across[n.rank] > 0 {
			across[n.rank] += drawGapIn
		}
		across[n.rank] += c
	}
	var total, widest vg.Length
	start := make([]vg.Length, ranks)
	for r := range ranks {
		start[r] = total
		total += along[r] + drawGapOut
		widest = max(widest, across[r])
	}
	total -= drawGapOut
	next := make([]vg.Length, ranks)
	for r := range ranks {
		next[r] = (widest - across[r]) / 2
	}
	for _, n := range g.nodes {
		_, c := size(n)
		posAlong := start[n.rank] + along[n.rank]/2
		posAcross := next[n.rank] + c/2
		next[n.rank] += c + drawGapIn
		if lr {
			n.x, n.y = drawMargin+posAlong, drawMargin+widest-posAcross
		} else {
			n.x, n.y = drawMargin+posAcross, drawMargin+total-posAlong
		}
	}
	w, h := widest+2*drawMargin, total+2*drawMargin
	if lr {
		w, h = total+2*drawMargin, widest+2*drawMargin
	}
	if err := checkCanvas(path, w, h, drawDPI); err != nil {
		return err
	}
	c, write, err := imageCanvas(path, w, h, drawDPI)
	if err != nil {
		return fmt.Errorf("%w (or .dot)", err)
	}
	g.paint(&c, sty, lr)
	if to != nil {
		_, err := write(to)
		return err
	}
	return writeImage(path, write)
}

// paint draws the edges (with arrowheads) and then the nodes over them.
func (g *drawGraph) paint(c *draw.Canvas, sty text.Style, lr bool) {
	line := draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(0.8)}
	for _, e := range g.edges {
		from, to := g.nodes[e[0]], g.nodes[e[1]]
		var p0, p1 vg.Point
		if lr {
			p0, p1 = vg.Point{X: from.x + from.w/2, Y: from.y}, vg.Point{X: to.x - to.w/2, Y: to.y}
		} else {
			p0, p1 = vg.Point{X: from.x, Y: from.y - from.h/2}, vg.Point{X: to.x, Y: to.y + to.h/2}
		}
		c.StrokeLines(line, []vg.Point{p0, p1})
		c.FillPolygon(color.Gray{0x40}, arrowHead(p0, p1))
	}
	for _, n := range g.nodes {
		x0, x1, y0, y1 := n.x-n.w/2, n.x+n.w/2, n.y-n.h/2, n.y+n.h/2
		var shape []vg.Point
		if n.layer {
			shape = []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		} else { // an octagon, as draw_net's blobs
			k := min(n.h, n.w) / 4
			shape = []vg.Point{{X: x0 + k, Y: y0}, {X: x1 - k, Y: y0}, {X: x1, Y: y0 + k}, {X: x1, Y: y1 - k},
				{X: x1 - k, Y: y1}, {X: x0 + k, Y: y1}, {X: x0, Y: y1 - k}, {X: x0, Y: y0 + k}}
		}
		c.FillPolygon(n.fill, shape)
		c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}, append(shape, shape[0]))
		c.FillText(sty, vg.Point{X: n.x, Y: n.y}, n.text)
	}
}

// maxLabelRunes bounds each line of a node's label in a picture: a name
// a megabyte long would otherwise size a canvas a megabyte of text wide.
const maxLabelRunes = 80

// maxCanvasPixels bounds a PNG picture (4 bytes a pixel in memory): 64
// million pixels, a net of some thousand layers side by side.
const maxCanvasPixels = 64 << 20

// drawnText joins a node's lines as the picture shows them, each clipped
// to maxLabelRunes with an ellipsis in the middle, so that the start and
// end of a long name stay readable.
func drawnText(lines []string) string {
	clipped := make([]string, len(lines))
	for i, l := range lines {
		if r := []rune(l); len(r) > maxLabelRunes {
			half := (maxLabelRunes - 1) / 2
			l = string(r[:half]) + "…" + string(r[len(r)-half:])
		}
		clipped[i] = l
	}
	return strings.Join(clipped, "\n")
}

// checkCanvas refuses a PNG picture larger than maxCanvasPixels, or than
// the memory the process can have, before its canvas is allocated. An SVG
// holds only what is drawn on it, whatever its size.
func checkCanvas(path string, w, h vg.Length, dpi int) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return nil
	}
	wpx, hpx := math.Ceil(float64(w/vg.Inch)*float64(dpi)), math.Ceil(float64(h/vg.Inch)*float64(dpi))
	if wpx*hpx > maxCanvasPixels {
		return fmt.Errorf("-o %s: the picture would be %.0fx%.0f pixels, more than the %d million a PNG may have: write .svg or .dot instead", path, wpx, hpx, maxCanvasPixels>>20)
	}
	if err := sysmem.Check(uint64(wpx*hpx*4), fmt.Sprintf("a PNG picture of %.0fx%.0f pixels", wpx, hpx)); err != nil {
		return fmt.Errorf("-o %s: %w: write .svg or .dot instead", path, err)
	}
	return nil
}

// arrowHead is a small triangle at p1 pointing from p0.
func arrowHead(p0, p1 vg.Point) []vg.Point {
	dx, dy := float64(p1.X-p0.X), float64(p1.Y-p0.Y)
	l := vg.Length(1)
	if d := vg.Length(math.Hypot(dx, dy)); d > 0 {
		l = d
	}
	ux, uy := vg.Length(dx)/l, vg.Length(dy)/l
	const size = 5
	back := vg.Point{X: p1.X - ux*size, Y: p1.Y - uy*size}
	return []vg.Point{p1, {X: back.X - uy*size/2, Y: back.Y + ux*size/2}, {X: back.X + uy*size/2, Y: back.Y - ux*size/2}}
}
