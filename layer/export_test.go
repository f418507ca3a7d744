package layer

// DeviceTransformed returns how many batches of a Data layer the device
// finished transforming (prefetch_pixels.go), or -1 for another layer.
func DeviceTransformed[T Float](l Layer[T]) int64 {
	if d, ok := l.(*Data[T]); ok && d.pf != nil {
		return d.pf.deviceTransformed.Load()
	}
	return -1
}

// ConvGEMMWay reports the way of our own GEMMs a cuDNN Convolution has
// (convolution_ways.go: "pointwise" or "" for none) and which
// passes take it: forward, bottom gradient, weight gradient.
func ConvGEMMWay[T Float](l Layer[T]) (string, [3]bool) {
	e, ok := l.LayerBase().Engine().(*convolutionDNN[T])
	if !ok {
		return "", [3]bool{}
	}
	switch e.way.(type) {
	case *pointwiseConv[T]:
		return "pointwise", e.use
	}
	return "", e.use
}

// SetPointwiseBudget bounds the partial weight gradients of 1x1 layers to
// bytes until the returned function restores the bound.
func SetPointwiseBudget(bytes int) (restore func()) {
	old := pointwiseBudget
	pointwiseBudget = bytes
	return func() { pointwiseBudget = old }
}

// DeviceDecoded returns how many batches of a Data layer nvJPEG decoded
// (prefetch_jpeg.go), or -1 for another layer.
func DeviceDecoded[T Float](l Layer[T]) int64 {
	if d, ok := l.(*Data[T]); ok && d.pf != nil && d.pf.dev.pixels != nil && d.pf.dev.pixels.jpeg != nil {
		return d.pf.dev.pixels.jpeg.decoded.Load()
	}
	return -1
}
