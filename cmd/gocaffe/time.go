package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// runTime benchmarks a model's layers (Caffe's `caffe time`): one warm-up
// forward-backward, then -iterations passes timing each layer's forward and
// backward (layerclock.go: wall time to the end of the layer's work on
// the CPU, the device's time between events on a GPU). A last line times
// whole passes without per-layer measurement, which is what training costs.
func runTime(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("time", stderr)
	model := fs.String("model", "", "the model definition protocol buffer text file")
	iterations := fs.Int("iterations", 50, "the number of iterations to run")
	phase := fs.String("phase", "TRAIN", "the net phase: TRAIN or TEST")
	plan := fs.Bool("plan", false, "print the net's execution plan (engines, fused layers, CUDA graph, memory) and stop without timing")
	memoryReport := fs.Bool("memory_report", false, "print every memory of the net's plan (parameters, activation slots and the blobs they hold in turn) and stop without timing")
	noReuse := fs.Bool("no_memory_reuse", false, "give every blob memory of its own, as Caffe (the plan's liveness pass off)")
	var nf netFlags
	nf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	stopProfile, err := nf.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	if *model == "" {
		fs.Usage()
		return fmt.Errorf("need -model: %w", errUsage)
	}
	if *iterations < 1 {
		return fmt.Errorf("-iterations %d: want at least 1", *iterations)
	}
	ph, ok := caffepb.Phase_value[*phase]
	if !ok {
		return fmt.Errorf("-phase %q: want TRAIN or TEST", *phase)
	}
	reduced, ownPrecision, err := nf.precisionOptions()
	if err != nil {
		return err
	}
	ctx, err := nf.context()
	if err != nil {
		return err
	}
	n, err := net.NewFromFile[float32](*model, net.Options{State: nf.state(caffepb.Phase(ph)), Context: ctx, Seed: 1701, Logger: glog.Logger(), SkipUnknownFields: nf.skipUnknown, NoMemoryReuse: *noReuse, Precision: reduced, OwnPrecision: ownPrecision})
	if err != nil {
		return err
	}
	defer n.Close()
	if *plan {
		_, err := fmt.Fprint(stdout, n.Plan())
		return err
	}
	if *memoryReport {
		_, err := fmt.Fprint(stdout, n.MemoryReport().Format(-1))
		return err
	}
	if err := logMemoryPlan(n); err != nil {
		return err
	}
	sync := ctx.Synchronize
	glog.Infof("Performing Forward")
	loss, err := n.Forward()
	if err != nil {
		return err
	}
	glog.Infof("Initial loss: %s", num(loss))
	glog.Infof("Performing Backward")
	if err := n.Backward(); err != nil {
		return err
	}
	if err := sync(); err != nil {
		return err
	}
	return timeLayers(n, *iterations, sync, stdout)
}

// timeLayers is the benchmark proper.
func timeLayers(n *net.Net[float32], iterations int, sync func() error, stdout io.Writer) error {
	layers := n.Layers()
	fwd, bwd := make([]time.Duration, len(layers)), make([]time.Duration, len(layers))
	// Each layer's blobs, fetched once: the net hands out copies.
	bottoms, tops, need := make([][]*blob.Blob[float32], len(layers)), make([][]*blob.Blob[float32], len(layers)), make([][]bool, len(layers))
	for i := range layers {
		bottoms[i], tops[i], need[i] = n.Bottoms(i), n.Tops(i), n.BottomNeedBackward(i)
	}
	clock, err := newLayerClock(n.Context().Device(), 2*len(layers), sync)
	if err != nil {
		return err
	}
	defer clock.close()
	var fwdTotal, bwdTotal time.Duration
	glog.Infof("*** Benchmark begins ***")
	if n.Context().Device() == nil {
		// On the CPU the products dominate: say which code runs them.
		glog.Infof("BLAS: %s, %d threads", mathfn.BLASNameWith(n.Context().Settings().GEMM), runtime.GOMAXPROCS(0))
	}
	glog.Infof("Testing for %d iterations.", iterations)
	total := time.Now()
	for it := range iterations {
		iterStart := time.Now()
		if err := clock.start(); err != nil {
			return err
		}
		if err := n.PrepareForward(0, len(layers)-1); err != nil {
			return err
		}
		for i := range layers {
			if _, err := layer.Forward(layers[i], bottoms[i], tops[i]); err != nil {
				return err
			}
			if err := clock.mark(i); err != nil {
				return err
			}
		}
		for i := len(layers) - 1; i >= 0; i-- {
			if err := layer.Backward(layers[i], tops[i], need[i], bottoms[i]); err != nil {
				return err
			}
			if err := clock.mark(2*len(layers) - 1 - i); err != nil {
				return err
			}
		}
		times, err := clock.read()
		if err != nil {
			return err
		}
		for i := range layers {
			fwd[i] += times[i]
			bwd[i] += times[2*len(layers)-1-i]
			fwdTotal += times[i]
			bwdTotal += times[2*len(layers)-1-i]
		}
		glog.Infof("Iteration: %d forward-backward time: %s ms.", it+1, ms(time.Since(iterStart), 1))
	}
	elapsed := time.Since(total)
	glog.Infof("Average time per layer: ")
	for i, name := range n.LayerNames() {
		fr, br := rates(layers[i], need[i], fwd[i], bwd[i], iterations)
		glog.Infof("%10s\tforward: %s ms.%s", name, ms(fwd[i], iterations), fr)
		glog.Infof("%10s\tbackward: %s ms.%s", name, ms(bwd[i], iterations), br)
	}
	glog.Infof("Average Forward pass: %s ms.", ms(fwdTotal, iterations))
	glog.Infof("Average Backward pass: %s ms.", ms(bwdTotal, iterations))
	glog.Infof("Average Forward-Backward: %s ms.", ms(elapsed, iterations))
	glog.Infof("Total Time: %s ms.", ms(elapsed, 1))
	glog.Infof("*** Benchmark ends ***")
	// The same passes (every layer's backward, as above and as Caffe's
	// time, even in a net without a loss, where Net.Backward would skip
	// them all), waiting for the device only at the end of each.
	start := time.Now()
	for range iterations {
		if err := n.PrepareForward(0, len(layers)-1); err != nil {
			return err
		}
		for i := range layers {
			if _, err := layer.Forward(layers[i], bottoms[i], tops[i]); err != nil {
				return err
			}
		}
		for i := len(layers) - 1; i >= 0; i-- {
			if err := layer.Backward(layers[i], tops[i], need[i], bottoms[i]); err != nil {
				return err
			}
		}
		if err := sync(); err != nil {
			return err
		}
	}
	pass := ms(time.Since(start), iterations)
	glog.Infof("Average Forward-Backward without per-layer synchronisation: %s ms.", pass)
	if d := n.Context().Device(); d != nil {
		_, peak := d.MemStats()
		glog.Infof("Peak device memory: %.1f MiB (held by gocaffe's allocations)", float64(peak)/(1<<20))
		logLayersMemory(n.LayersDeviceMemory())
	}
	fmt.Fprintf(stdout, "forward-backward: %s ms (per layer, %s: %s ms)\n", pass, clock.how(), ms(elapsed, iterations))
	return nil
}

// rates returns " (x GFLOP/s)" for the forward and backward times of a
// layer that counts its floating-point operations (convolution, inner
// product), after Caffe's "ms." so that scripts reading the times still
// find them; nothing for other layers.
func rates(l layer.Layer[float32], needBackward []bool, fwd, bwd time.Duration, iterations int) (string, string) {
	c, ok := l.(layer.FLOPCounter)
	if !ok {
		return "", ""
	}
	down := false
	for _, b := range needBackward {
		down = down || b
	}
	f, b := c.FLOPs(down)
	rate := func(flops float64, d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return fmt.Sprintf(" (%.1f GFLOP/s)", flops*float64(iterations)/d.Seconds()/1e9)
	}
	return rate(f, fwd), rate(b, bwd)
}

// ms formats d/n in milliseconds as Caffe does.
func ms(d time.Duration, n int) string {
	return fmt.Sprintf("%.6g", float64(d.Microseconds())/1000/float64(n))
}

// logLayersMemory logs the device memory the layers hold of their own
// (net.Net.LayersDeviceMemory), in total and the largest five.
func logLayersMemory(uses []net.MemoryUse) {
	total := 0
	for _, u := range uses {
		total += u.Bytes
	}
	var largest []string
	for _, u := range uses[:min(5, len(uses))] {
		largest = append(largest, fmt.Sprintf("%s %.1f MiB", u.What, float64(u.Bytes)/(1<<20)))
	}
	glog.Infof("Layers' own device memory: %.1f MiB in %d layers; the largest: %s", float64(total)/(1<<20), len(uses), strings.Join(largest, ", "))
}
