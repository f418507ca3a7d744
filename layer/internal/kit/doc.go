// Package kit is what the packages of gocaffe's layer families share
// below the layer contract: launching their CUDA kernels, cuDNN tensor
// descriptors, the broadcasting arithmetic of Bias, Scale and the
// convolutions' bias, spreading element-wise passes over the cores, and
// small buffers (a ones vector, a scratch blob made on first use).
//
// It imports nothing of package layer: functions that need a layer's state
// take the small interfaces that *layer.Base satisfies (BlobMaker,
// GPUViewer), so that package layer itself may use the kit too.
package kit

import "github.com/gocaffe/gocaffe/blob"

// Float is the element type of blobs.
type Float = blob.Float
