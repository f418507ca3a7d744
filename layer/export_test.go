package layer

// DeviceTransformed returns how many batches of a Data layer the device
// finished transforming (prefetch_pixels.go), or -1 for another layer.
func DeviceTransformed[T Float](l Layer[T]) int64 {
	if d, ok := l.(*Data[T]); ok && d.pf != nil {
		return d.pf.deviceTransformed.Load()
	}
	return -1
}

// PointwiseGEMM reports which passes of a cuDNN Convolution go through
// cuBLAS's strided GEMMs (convolution_pointwise.go): forward, bottom
// gradient, weight gradient.
func PointwiseGEMM[T Float](l Layer[T]) [3]bool {
	if e, ok := l.LayerBase().engine.(*convolutionDNN[T]); ok && e.pw != nil {
		return [3]bool{e.pw.fwd, e.pw.bwdData, e.pw.bwdFilter}
	}
	return [3]bool{}
}

// SetPointwiseBudget bounds the partial weight gradients of 1x1 layers to
// bytes until the returned function restores the bound.
func SetPointwiseBudget(bytes int) (restore func()) {
	old := pointwiseBudget
	pointwiseBudget = bytes
	return func() { pointwiseBudget = old }
}
