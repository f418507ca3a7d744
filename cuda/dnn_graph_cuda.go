//go:build cuda

package cuda

/*
#include <stdint.h>
#include "gocaffe_cudnn.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
)

// graphAlign is the alignment the graph plans assume of every pointer:
// what cudaMalloc and the nets' memory plans give; a call on less aligned
// memory takes the legacy algorithm instead (ConvPlan.takes).
const graphAlign = 16

// convGraph is a pass's graph and plans in C memory, freed when the
// ConvPlan holding it is unreachable.
type convGraph struct{ g *C.struct_gc_dnn_graph }

func int64s(v []int) []C.int64_t {
	out := make([]C.int64_t, len(v))
	for i, x := range v {
		out[i] = C.int64_t(x)
	}
	return out
}

// newConvGraph builds pass which's graph (0 forward, 1 data gradient, 2
// weight gradient, the tensors in the roles of ConvFind) and the plans of
// the engines cuDNN's heuristics rank first that fit maxWorkspace.
func (n *DNN) newConvGraph(which int, beta float64, x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, tf32 bool, maxWorkspace int) (*convGraph, error) {
	if len(x.dims) != len(y.dims) || len(x.dims) != len(w.dims) || len(x.dims) != len(c.pads)+2 {
		return nil, fmt.Errorf("cuda: graph convolution: dims %v, %v, %v and %d spatial axes disagree", x.dims, w.dims, y.dims, len(c.pads))
	}
	if x.Type != y.Type || x.Type != w.typ {
		return nil, fmt.Errorf("cuda: graph convolution: x, w and y of types %d, %d, %d", x.Type, w.typ, y.Type)
	}
	xd, xs := int64s(x.dims), int64s(x.Layout.Strides(x.dims))
	wd, wstr := int64s(w.dims), int64s(w.layout.Strides(w.dims))
	yd, ys := int64s(y.dims), int64s(y.Layout.Strides(y.dims))
	pads, strides, dil := int64s(c.pads), int64s(c.strides), int64s(c.dilation)
	tc := C.int(0)
	if tf32 || x.Type == DNNHalf || x.Type == DNNBFloat16 {
		tc = 1
	}
	g := &convGraph{}
	status := C.gc_dnn_graph_conv(n.dev.ctx, n.h, C.int(which), C.int(x.Type), C.int(c.typ), C.int(len(xd)),
		&xd[0], &xs[0], &wd[0], &wstr[0], &yd[0], &ys[0], &pads[0], &strides[0], &dil[0],
		graphAlign, 1, C.double(beta), tc, 1, C.int64_t(maxWorkspace), &g.g)
	if err := dnnError(fmt.Sprintf("cudnn graph convolution (pass %d, x %v, w %v)", which, x.dims, w.dims), status); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *convGraph) plans() int { return int(C.gc_dnn_graph_plans(g.g)) }

func (n *DNN) runGraph(g *convGraph, i int, x, w, y, ws DevicePtr) error {
	return dnnError("cudnnBackendExecute", C.gc_dnn_graph_execute(n.dev.ctx, n.h, g.g, C.int(i), dp(x), dp(w), dp(y), dp(ws)))
}

// runPlan runs a plan (ConvForward and the gradients, where it takes the
// call).
func (n *DNN) runPlan(p *ConvPlan, x, w, y, ws DevicePtr) error {
	return n.runGraph(p.graph.(*convGraph), 0, x, w, y, ws)
}

// ConvFindGraph is ConvFind that also times the plans of cuDNN's graph
// API for the pass, built for alpha 1 and beta (the graph fixes them), and
// returns the fastest of both: the legacy algorithm alone, or a Plan
// beside it (which the passes run wherever the call is the one it was
// built for). On the H100, cuDNN 9, the graph API's engines ran ResNet-50's
// 16-bit 3x3 convolutions at about twice the speed of the legacy
// algorithms. With neither, it returns the legacy search's error.
func (n *DNN) ConvFindGraph(which int, beta float64, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, y *TensorDesc, yp DevicePtr, ws DevicePtr, wsBytes int, tf32 bool) (ConvAlgo, error) {
	legacy, legacyErr := n.ConvFind(which, x, xp, w, wp, c, y, yp, ws, wsBytes, tf32)
	g, err := n.newConvGraph(which, beta, x, w, c, y, tf32, wsBytes)
	if err != nil {
		return legacy, legacyErr
	}
	best, bestMs := -1, math.Inf(1)
	if legacyErr == nil {
		run := func() error { return n.runLegacy(which, legacy, beta, x, xp, w, wp, c, y, yp, ws) }
		if ms, err := n.timePass(run); err == nil {
			bestMs = ms
		}
	}
	for i := range g.plans() {
		ms, err := n.timePass(func() error { return n.runGraph(g, i, xp, wp, yp, ws) })
		if err == nil && ms < bestMs {
			best, bestMs = i, ms
		}
	}
	if best < 0 {
		g.destroy()
		return legacy, legacyErr
	}
	C.gc_dnn_graph_keep(g.g, C.int(best))
	p := &ConvPlan{
		Engine:    g.engine(0),
		Workspace: g.workspace(0),
		Alpha:     1,
		Beta:      beta,
		align:     graphAlign,
		graph:     g,
	}
	runtime.AddCleanup(p, func(cg *C.struct_gc_dnn_graph) { C.gc_dnn_graph_destroy(cg) }, g.g)
	if legacyErr != nil { // the implicit GEMM (no workspace) takes what the plan does not
		legacy = ConvAlgo{}
	}
	return ConvAlgo{Algo: legacy.Algo, Workspace: max(legacy.Workspace, p.Workspace), Plan: p}, nil
}

// runLegacy runs pass which with the legacy algorithm a.
func (n *DNN) runLegacy(which int, a ConvAlgo, beta float64, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, y *TensorDesc, yp DevicePtr, ws DevicePtr) error {
	switch which {
	case 0:
		return n.ConvForward(1, x, xp, w, wp, c, a, ws, beta, y, yp)
	case 1:
		return n.ConvBackwardData(1, w, wp, y, yp, c, a, ws, beta, x, xp)
	}
	return n.ConvBackwardFilter(1, x, xp, y, yp, c, a, ws, beta, w, wp)
}

// timePass returns f's device milliseconds: the least of three timed
// calls after one to warm up.
func (n *DNN) timePass(f func() error) (float64, error) {
	if err := f(); err != nil {
		return 0, err
	}
	start, err := n.dev.NewEvent()
	if err != nil {
		return 0, err
	}
	defer start.Close()
	end, err := n.dev.NewEvent()
	if err != nil {
		return 0, err
	}
	defer end.Close()
	best := math.Inf(1)
	for range 3 {
		if err := start.Record(n.dev.stream); err != nil {
			return 0, err
		}
		if err := f(); err != nil {
			return 0, err
		}
		if err := end.Record(n.dev.stream); err != nil {
			return 0, err
		}
		if err := end.Synchronize(); err != nil {
			return 0, err
		}
		ms, err := ElapsedMillis(start, end)
		if err != nil {
			return 0, err
		}
		best = min(best, float64(ms))
	}
	return best, nil
}

func (g *convGraph) destroy()            { C.gc_dnn_graph_destroy(g.g) }
func (g *convGraph) engine(i int) int    { return int(C.gc_dnn_graph_engine(g.g, C.int(i))) }
func (g *convGraph) workspace(i int) int { return int(C.gc_dnn_graph_workspace(g.g, C.int(i))) }
