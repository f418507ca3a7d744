//go:build cuda

package cuda_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

func TestLayoutStrides(t *testing.T) {
	for _, c := range []struct {
		l    cuda.Layout
		dims []int
		want []int
	}{
		{cuda.LayoutNCHW, []int{2, 3, 4, 5}, []int{60, 20, 5, 1}},
		{cuda.LayoutNHWC, []int{2, 3, 4, 5}, []int{60, 1, 15, 3}},
		{cuda.LayoutNHWC, []int{2, 3, 4, 5, 6}, []int{360, 1, 90, 18, 3}},
		{cuda.LayoutNHWC, []int{7, 5}, []int{5, 1}}, // no spatial axis: as NCHW
	} {
		got := c.l.Strides(c.dims)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%v.Strides(%v) = %v, want %v", c.l, c.dims, got, c.want)
		}
	}
}

// toNHWC returns the NCHW tensor v of n images, c channels and s pixels
// each in channels-last order.
func toNHWC(v []float32, n, c, s int) []float32 {
	out := make([]float32, len(v))
	for i := range n {
		for ch := range c {
			for p := range s {
				out[(i*s+p)*c+ch] = v[(i*c+ch)*s+p]
			}
		}
	}
	return out
}

// The three convolution passes on channels-last tensors and weights give,
// reordered, what they give on NCHW ones (strict FP32: the same products,
// perhaps summed in another order).
func TestConvNHWCMatchesNCHW(t *testing.T) {
	d := cudatest.Device(t)
	dnn, err := d.DNN()
	if err != nil {
		t.Skip(err)
	}
	const n, c, h, k, r, pad, stride = 2, 5, 9, 6, 3, 1, 2
	out := (h+2*pad-r)/stride + 1
	xs, ys, ws := []int{n, c, h, h}, []int{n, k, out, out}, []int{k, c, r, r}
	vals := func(m int, seed int) []float32 {
		v := make([]float32, m)
		for i := range v {
			v[i] = float32((i*2654435761+seed*97)%1000)/500 - 1
		}
		return v
	}
	x, w, dy := vals(n*c*h*h, 1), vals(k*c*r*r, 2), vals(n*k*out*out, 3)
	cd, err := cuda.NewConvDesc(cuda.DNNFloat, []int{pad, pad}, []int{stride, stride}, []int{1, 1}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer cd.Destroy()
	const wsBytes = 64 << 20
	wsp := cudatest.Alloc(t, d, wsBytes)
	type result struct{ y, dx, dw []float32 }
	run := func(l cuda.Layout, x, w, dy []float32) result {
		var xd, yd *cuda.TensorDesc
		if l == cuda.LayoutNHWC {
			xd, _ = cuda.NewTensorDescNHWC(cuda.DNNFloat, xs)
			yd, _ = cuda.NewTensorDescNHWC(cuda.DNNFloat, ys)
		} else {
			xd, _ = cuda.NewTensorDesc(cuda.DNNFloat, xs)
			yd, _ = cuda.NewTensorDesc(cuda.DNNFloat, ys)
		}
		wd, err := cuda.NewFilterDescIn(cuda.DNNFloat, l, ws)
		if err != nil {
			t.Fatal(err)
		}
		defer xd.Destroy()
		defer yd.Destroy()
		defer wd.Destroy()
		up := func(v []float32) cuda.DevicePtr {
			p := cudatest.Alloc(t, d, 4*len(v))
			if err := d.CopyHtoD(p, f32bytes(v)); err != nil {
				t.Fatal(err)
			}
			return p
		}
		xp, wp, dyp := up(x), up(w), up(dy)
		yp, dxp, dwp := up(make([]float32, len(dy))), up(make([]float32, len(x))), up(make([]float32, len(w)))
		check := func(what string, err error) {
			if err != nil {
				t.Fatalf("%v %s: %v", l, what, err)
			}
		}
		a, err := dnn.ConvFind(0, xd, xp, wd, wp, cd, yd, yp, wsp, wsBytes, false)
		check("find forward", err)
		check("forward", dnn.ConvForward(1, xd, xp, wd, wp, cd, a, wsp, 0, yd, yp))
		a, err = dnn.ConvFind(1, xd, dxp, wd, wp, cd, yd, dyp, wsp, wsBytes, false)
		check("find data gradient", err)
		check("data gradient", dnn.ConvBackwardData(1, wd, wp, yd, dyp, cd, a, wsp, 0, xd, dxp))
		a, err = dnn.ConvFind(2, xd, xp, wd, dwp, cd, yd, dyp, wsp, wsBytes, false)
		check("find weight gradient", err)
		check("weight gradient", dnn.ConvBackwardFilter(1, xd, xp, yd, dyp, cd, a, wsp, 0, wd, dwp))
		down := func(p cuda.DevicePtr, m int) []float32 {
			v := make([]float32, m)
			if err := d.CopyDtoH(f32bytes(v), p); err != nil {
				t.Fatal(err)
			}
			return v
		}
		return result{down(yp, len(dy)), down(dxp, len(x)), down(dwp, len(w))}
	}
	want := run(cuda.LayoutNCHW, x, w, dy)
	got := run(cuda.LayoutNHWC, toNHWC(x, n, c, h*h), toNHWC(w, k, c, r*r), toNHWC(dy, n, k, out*out))
	for _, cmp := range []struct {
		name      string
		got, want []float32
	}{
		{"y", got.y, toNHWC(want.y, n, k, out*out)},
		{"dx", got.dx, toNHWC(want.dx, n, c, h*h)},
		{"dw", got.dw, toNHWC(want.dw, k, c, r*r)},
	} {
		for i := range cmp.want {
			if math.Abs(float64(cmp.got[i]-cmp.want[i])) > 1e-4*(1+math.Abs(float64(cmp.want[i]))) {
				t.Fatalf("%s[%d]: NHWC %g, NCHW %g", cmp.name, i, cmp.got[i], cmp.want[i])
			}
		}
	}
}

// BenchmarkConvLayouts times cuDNN's three passes on ResNet-50's shapes
// in bfloat16 (FP32 sums) and TF32, channels-first against channels-last
// tensors and weights, with the algorithm cudnnFind chooses for each:
// what the layout pass of the plan would gain on the convolutions.
func BenchmarkConvLayouts(b *testing.B) {
	d := cudatest.Device(b)
	dnn, err := d.DNN()
	if err != nil {
		b.Skip(err)
	}
	const wsBytes = 1 << 30
	ws := cudatest.Alloc(b, d, wsBytes)
	for _, ty := range []struct {
		name string
		t    cuda.DNNType
		size int
	}{{"bf16", cuda.DNNBFloat16, 2}, {"tf32", cuda.DNNFloat, 4}} {
		b.Run(ty.name, func(b *testing.B) {
			for _, s := range resnet50Convs {
				for _, l := range []cuda.Layout{cuda.LayoutNCHW, cuda.LayoutNHWC} {
					benchConvLayout(b, d, dnn, ws, wsBytes, ty.t, ty.size, l, s)
				}
			}
		})
	}
}

func benchConvLayout(b *testing.B, d *cuda.Device, dnn *cuda.DNN, ws cuda.DevicePtr, wsBytes int, t cuda.DNNType, size int, l cuda.Layout, s convShape) {
	out := (s.hw+2*s.pad-s.r)/s.s + 1
	xs, ys, wsh := []int{s.n, s.c, s.hw, s.hw}, []int{s.n, s.k, out, out}, []int{s.k, s.c, s.r, s.r}
	desc := func(dims []int) *cuda.TensorDesc {
		var td *cuda.TensorDesc
		var err error
		if l == cuda.LayoutNHWC {
			td, err = cuda.NewTensorDescNHWC(t, dims)
		} else {
			td, err = cuda.NewTensorDesc(t, dims)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { td.Destroy() })
		return td
	}
	xd, yd := desc(xs), desc(ys)
	wd, err := cuda.NewFilterDescIn(t, l, wsh)
	if err != nil {
		b.Fatal(err)
	}
	defer wd.Destroy()
	cd, err := cuda.NewConvDesc(cuda.DNNFloat, []int{s.pad, s.pad}, []int{s.s, s.s}, []int{1, 1}, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	defer cd.Destroy()
	count := func(v []int) int { return v[0] * v[1] * v[2] * v[3] }
	fill := func(m int) cuda.DevicePtr {
		host := make([]float32, m)
		for i := range host {
			host[i] = float32((i*2654435761)%1000)/1000 - 0.5
		}
		raw := f32bytes(host)
		if size == 2 { // bfloat16: the high halves
			half := make([]byte, 2*m)
			for i := range m {
				half[2*i], half[2*i+1] = raw[4*i+2], raw[4*i+3]
			}
			raw = half
		}
		p := cudatest.Alloc(b, d, len(raw))
		if err := d.CopyHtoD(p, raw); err != nil {
			b.Fatal(err)
		}
		return p
	}
	x, y, w := fill(count(xs)), fill(count(ys)), fill(count(wsh))
	dx, dw := fill(count(xs)), fill(count(wsh))
	// The three passes: output and inputs in ConvFind's roles.
	ptrs := [3][3]cuda.DevicePtr{{x, w, y}, {dx, w, y}, {x, dw, y}}
	run := func(which int, a cuda.ConvAlgo) error {
		p := ptrs[which]
		switch which {
		case 0:
			return dnn.ConvForward(1, xd, p[0], wd, p[1], cd, a, ws, 0, yd, p[2])
		case 1:
			return dnn.ConvBackwardData(1, wd, p[1], yd, p[2], cd, a, ws, 0, xd, p[0])
		}
		return dnn.ConvBackwardFilter(1, xd, p[0], yd, p[2], cd, a, ws, 0, wd, p[1])
	}
	for which, pass := range []string{"fwd", "bwd_data", "bwd_filter"} {
		p := ptrs[which]
		legacy, err := dnn.ConvFind(which, xd, p[0], wd, p[1], cd, yd, p[2], ws, wsBytes, true)
		if err != nil {
			b.Logf("%s %v %s: %v", s.name, l, pass, err)
		} else {
			b.Run(fmt.Sprintf("%s/%v/%s/legacy", s.name, l, pass), func(b *testing.B) {
				timeGPU(b, d, func() error { return run(which, legacy) })
			})
		}
		graph, err := dnn.ConvFindGraph(which, 0, xd, p[0], wd, p[1], cd, yd, p[2], ws, wsBytes, true)
		if err != nil || graph.Plan == nil {
			continue
		}
		b.Run(fmt.Sprintf("%s/%v/%s/graph-engine%d", s.name, l, pass, graph.Plan.Engine), func(b *testing.B) {
			timeGPU(b, d, func() error { return run(which, graph) })
		})
	}
}

// convRef is a 2-D convolution of n images of c channels (h x h) into k
// channels (out x out), r x r kernels, computed on the host in float64.
type convRef struct{ n, c, h, k, r, pad, stride, out int }

// each calls f with the flat indices of x, w and y of every product of
// the convolution.
func (s convRef) each(f func(xi, wi, yi int)) {
	for ni := range s.n {
		for ki := range s.k {
			for oy := range s.out {
				for ox := range s.out {
					for ci := range s.c {
						for ky := range s.r {
							for kx := range s.r {
								iy, ix := oy*s.stride-s.pad+ky, ox*s.stride-s.pad+kx
								if iy < 0 || ix < 0 || iy >= s.h || ix >= s.h {
									continue
								}
								f(((ni*s.c+ci)*s.h+iy)*s.h+ix, ((ki*s.c+ci)*s.r+ky)*s.r+kx, ((ni*s.k+ki)*s.out+oy)*s.out+ox)
							}
						}
					}
				}
			}
		}
	}
}

// pass returns what pass which computes into its output (y, dx or dw)
// from the other two, plus beta times the output's initial values, and
// for each output the sum of the magnitudes of its terms (the scale of
// the rounding an engine's transforms may add).
func (s convRef) pass(which int, x, w, y []float32, beta float64, init []float32) (out, mag []float64) {
	out, mag = make([]float64, len(init)), make([]float64, len(init))
	for i, v := range init {
		out[i] = beta * float64(v)
		mag[i] = math.Abs(out[i])
	}
	s.each(func(xi, wi, yi int) {
		at, term := wi, float64(x[xi])*float64(y[yi])
		switch which {
		case 0:
			at, term = yi, float64(x[xi])*float64(w[wi])
		case 1:
			at, term = xi, float64(y[yi])*float64(w[wi])
		}
		out[at] += term
		mag[at] += math.Abs(term)
	})
	return out, mag
}

// eighths returns m values that are multiples of 1/8 in [-1, 1]: exact in
// bfloat16 and TF32, so every product and (short) sum of the passes is
// exact in FP32.
func eighths(m, seed int) []float32 {
	v := make([]float32, m)
	for i := range v {
		v[i] = float32((i*37+seed*11)%17-8) / 8
	}
	return v
}

// Every plan of cuDNN's graph API that the heuristics offer, for each
// pass, beta 0 and 1, TF32 and BFLOAT16, computes what the host does. The
// inputs are exact in both types and every product and sum of them exact
// in FP32, so what is left is the engines' own rounding: the transforms of
// a Winograd or FFT engine (within 2^-10 of the terms' magnitudes, the
// data's TF32 rounding) and, in bfloat16, the output's rounding, twice
// where beta adds the old output (within 2^-7 of it). ConvFindGraph's
// choice, run through the legacy entry points, matches too.
func TestConvGraphPlansMatchHost(t *testing.T) {
	d := cudatest.Device(t)
	dnn, err := d.DNN()
	if err != nil {
		t.Skip(err)
	}
	const wsBytes = 256 << 20
	wsp := cudatest.Alloc(t, d, wsBytes)
	for _, ty := range []struct {
		name string
		t    cuda.DNNType
		size int
	}{{"tf32", cuda.DNNFloat, 4}, {"bf16", cuda.DNNBFloat16, 2}} {
		for _, stride := range []int{1, 2} {
			s := convRef{n: 2, c: 16, h: 9, k: 8, r: 3, pad: 1, stride: stride}
			s.out = (s.h+2*s.pad-s.r)/s.stride + 1
			for which := range 3 {
				for _, beta := range []float64{0, 1} {
					name := fmt.Sprintf("%s/stride%d/pass%d/beta%g", ty.name, stride, which, beta)
					t.Run(name, func(t *testing.T) {
						checkGraphPass(t, d, dnn, wsp, wsBytes, ty.t, ty.size, s, which, beta)
					})
				}
			}
		}
	}
}

func checkGraphPass(t *testing.T, d *cuda.Device, dnn *cuda.DNN, wsp cuda.DevicePtr, wsBytes int, typ cuda.DNNType, size int, s convRef, which int, beta float64) {
	xs, ws, ys := []int{s.n, s.c, s.h, s.h}, []int{s.k, s.c, s.r, s.r}, []int{s.n, s.k, s.out, s.out}
	x, w, y := eighths(s.n*s.c*s.h*s.h, 1), eighths(s.k*s.c*s.r*s.r, 2), eighths(s.n*s.k*s.out*s.out, 3)
	inits := [][]float32{eighths(len(y), 4), eighths(len(x), 5), eighths(len(w), 6)}
	init := inits[which]
	want, mag := s.pass(which, x, w, y, beta, init)
	xd, _ := cuda.NewTensorDesc(typ, xs)
	yd, _ := cuda.NewTensorDesc(typ, ys)
	wd, err := cuda.NewFilterDesc(typ, ws)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := cuda.NewConvDesc(cuda.DNNFloat, []int{s.pad, s.pad}, []int{s.stride, s.stride}, []int{1, 1}, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { xd.Destroy(); yd.Destroy(); wd.Destroy(); cd.Destroy() }()
	toDevice := func(p cuda.DevicePtr, v []float32) {
		raw := f32bytes(v)
		if size == 2 {
			half := make([]byte, 2*len(v))
			for i := range v {
				half[2*i], half[2*i+1] = raw[4*i+2], raw[4*i+3]
			}
			raw = half
		}
		if err := d.CopyHtoD(p, raw); err != nil {
			t.Fatal(err)
		}
	}
	fromDevice := func(p cuda.DevicePtr, m int) []float32 {
		v := make([]float32, m)
		raw := f32bytes(v)
		if size == 4 {
			if err := d.CopyDtoH(raw, p); err != nil {
				t.Fatal(err)
			}
			return v
		}
		half := make([]byte, 2*m)
		if err := d.CopyDtoH(half, p); err != nil {
			t.Fatal(err)
		}
		for i := range m {
			raw[4*i+2], raw[4*i+3] = half[2*i], half[2*i+1]
		}
		return v
	}
	xp, wp, yp := cudatest.Alloc(t, d, size*len(x)), cudatest.Alloc(t, d, size*len(w)), cudatest.Alloc(t, d, size*len(y))
	ptrs := []cuda.DevicePtr{yp, xp, wp} // the output of each pass
	load := func() {
		toDevice(xp, x)
		toDevice(wp, w)
		toDevice(yp, y)
		toDevice(ptrs[which], init)
	}
	check := func(what string) {
		got := fromDevice(ptrs[which], len(init))
		for i := range want {
			tol := mag[i] / 1024
			if size == 2 {
				tol += math.Abs(want[i]) / 128
			}
			if math.Abs(float64(got[i])-want[i]) > tol {
				t.Fatalf("%s: output %d = %g, want %g", what, i, got[i], want[i])
			}
		}
	}
	plans := 0
	err = cuda.EachConvGraphPlan(dnn, which, beta, xd, wd, cd, yd, true, wsBytes, func(engine, workspace int, run func(x, w, y, ws cuda.DevicePtr) error) {
		plans++
		load()
		if err := run(xp, wp, yp, wsp); err != nil {
			t.Errorf("engine %d: %v", engine, err)
			return
		}
		check(fmt.Sprintf("engine %d (workspace %d)", engine, workspace))
	})
	if err != nil || plans == 0 {
		t.Fatalf("no plan: %v", err)
	}
	load()
	a, err := dnn.ConvFindGraph(which, beta, xd, xp, wd, wp, cd, yd, yp, wsp, wsBytes, true)
	if err != nil {
		t.Fatal(err)
	}
	load()
	switch which {
	case 0:
		err = dnn.ConvForward(1, xd, xp, wd, wp, cd, a, wsp, beta, yd, yp)
	case 1:
		err = dnn.ConvBackwardData(1, wd, wp, yd, yp, cd, a, wsp, beta, xd, xp)
	default:
		err = dnn.ConvBackwardFilter(1, xd, xp, yd, yp, cd, a, wsp, beta, wd, wp)
	}
	if err != nil {
		t.Fatalf("%v: %v", a, err)
	}
	check(a.String())
	t.Logf("%d plans; ConvFindGraph took %v", plans, a)
}
