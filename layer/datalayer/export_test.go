package datalayer

import (
	"github.com/gocaffe/gocaffe/layer"
)

// DeviceTransformed returns how many batches of a Data layer the device
// finished transforming (prefetch_pixels.go), or -1 for another layer.
func DeviceTransformed[T layer.Float](l layer.Layer[T]) int64 {
	if d, ok := l.(*dataLayer[T]); ok && d.pf != nil {
		return d.pf.deviceTransformed.Load()
	}
	return -1
}

// DeviceDecoded returns how many batches of a Data layer nvJPEG decoded
// (prefetch_jpeg.go), or -1 for another layer.
func DeviceDecoded[T layer.Float](l layer.Layer[T]) int64 {
	if d, ok := l.(*dataLayer[T]); ok && d.pf != nil && d.pf.dev.pixels != nil && d.pf.dev.pixels.jpeg != nil {
		return d.pf.dev.pixels.jpeg.decoded.Load()
	}
	return -1
}
