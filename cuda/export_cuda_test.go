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
