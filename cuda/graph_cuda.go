//go:build cuda

package cuda

/*
#include "gocaffe_cuda.h"
*/
import "C"

import "fmt"

// Graph is work recorded from a stream (BeginCapture, EndCapture) and
// instantiated, to be replayed with one launch: the kernels, copies and
// library calls queued between the two calls, with the arguments they had
// then. Close it when done.
type Graph struct {
	dev   *Device
	g     C.CUgraph
	exec  C.CUgraphExec
	nodes int
}

// BeginCapture starts recording the work queued on s into a graph instead
// of running it. Until EndCapture nothing queued on s runs, and any call
// that would wait for s, or order the legacy default stream with it (the
// synchronous copies and Memset), fails and spoils the capture; EndCapture
// then reports it.
func (s *Stream) BeginCapture() error {
	return driverError("cuStreamBeginCapture", C.gc_stream_begin_capture(s.dev.ctx, s.s))
}

// Capturing reports whether s is recording a graph.
func (s *Stream) Capturing() (bool, error) {
	var on C.int
	if err := driverError("cuStreamIsCapturing", C.gc_stream_is_capturing(s.dev.ctx, s.s, &on)); err != nil {
		return false, err
	}
	return on != 0, nil
}

// EndCapture stops recording on s and instantiates what was recorded. If
// the capture was spoiled (see BeginCapture) it returns the driver's error
// and no graph; s is then usable again either way.
func (s *Stream) EndCapture() (*Graph, error) {
	g := &Graph{dev: s.dev}
	if err := driverError("cuStreamEndCapture", C.gc_stream_end_capture(s.dev.ctx, s.s, &g.g)); err != nil {
		if g.g != nil {
			C.gc_graph_destroy(s.dev.ctx, g.g, nil)
		}
		return nil, err
	}
	var nodes C.size_t
	if err := driverError("cuGraphInstantiate", C.gc_graph_instantiate(s.dev.ctx, &g.exec, g.g, &nodes)); err != nil {
		C.gc_graph_destroy(s.dev.ctx, g.g, nil)
		return nil, err
	}
	g.nodes = int(nodes)
	return g, nil
}

// Nodes returns the number of operations in the graph.
func (g *Graph) Nodes() int { return g.nodes }

// Launch queues one replay of the graph on s.
func (g *Graph) Launch(s *Stream) error {
	if g.exec == nil {
		return fmt.Errorf("cuda: launch of a closed graph")
	}
	return driverError("cuGraphLaunch", C.gc_graph_launch(g.dev.ctx, g.exec, s.s))
}

// Close destroys the graph. Replays already queued finish first.
func (g *Graph) Close() error {
	if g.exec == nil {
		return nil
	}
	err := driverError("cuGraphDestroy", C.gc_graph_destroy(g.dev.ctx, g.g, g.exec))
	g.g, g.exec = nil, nil
	return err
}
