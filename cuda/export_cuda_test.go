//go:build cuda

package cuda

// NVRTCCompiles and ForgetModules let the tests see the disk cache at work.

// NVRTCCompiles returns how many programs NVRTC has compiled.
func NVRTCCompiles() int64 { return nvrtcCompiles.Load() }

// ForgetModules drops d's in-memory modules, as a new process would start.
func ForgetModules(d *Device) {
	d.modMu.Lock()
	d.modules = map[string]*Module{}
	d.modMu.Unlock()
}

// SkipJPEGCheck makes j skip the hardware backend's check of each image
// (for timing the check).
func SkipJPEGCheck(j *JPEGDecoder) { j.unchecked = true }

// EachConvGraphPlan builds the plans of cuDNN's graph API for pass which
// (DNN.ConvFindGraph's arguments) and calls f with each plan's engine and
// a function running it, then frees them.
func EachConvGraphPlan(n *DNN, which int, beta float64, x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, tf32 bool, maxWorkspace int, f func(engine, workspace int, run func(x, w, y, ws DevicePtr) error)) error {
	g, err := n.newConvGraph(which, beta, x, w, c, y, tf32, maxWorkspace)
	if err != nil {
		return err
	}
	defer g.destroy()
	for i := range g.plans() {
		f(g.engine(i), g.workspace(i), func(x, w, y, ws DevicePtr) error { return n.runGraph(g, i, x, w, y, ws) })
	}
	return nil
}
