package vision

import "github.com/gocaffe/gocaffe/mathfn"

// The host backward pass's parameter gradients over parts of the batch.
// Each part summed its images' weight gradients into a buffer of its own,
// cleared first, and the calling goroutine then added every part's buffer
// to the blob's diff, alone: for ResNet-50 (25M weights) on two cores,
// clearing 200 MB and reading 400 MB on one core each pass. Here part 0
// adds to the blob's diff itself, as the one-core pass does (each image's
// product accumulates into it, as in Caffe), and the other parts' buffers
// are added by both cores, each over its own range of the weights (the
// same additions, in the same order, per weight).

// paramDiffs gets the blobs' gradients that part 0 adds to, on the pass's
// goroutine before the parts start.
func (l *convBase[T]) paramDiffs() {
	c := &l.cpu
	c.blobW, c.blobB = nil, nil
	if l.ParamPropagateDown(0) {
		c.blobW = l.Blobs()[0].MutableCPUDiff()
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		c.blobB = l.Blobs()[1].MutableCPUDiff()
	}
}

// sumPartGradients adds the gradients of parts 1 to parts-1 to the
// blobs'.
func (l *convBase[T]) sumPartGradients(parts int) {
	c := &l.cpu
	if c.sumPart == nil {
		c.sumPart = l.sumGradientRange
	}
	c.sumParts = parts
	if c.blobW != nil {
		mathfn.Parallel(len(c.blobW), c.sumPart)
	}
	if c.blobB != nil {
		for _, d := range c.bdiffs[1:parts] {
			mathfn.Axpy(len(c.blobB), 1, d, c.blobB)
		}
	}
	c.blobW, c.blobB = nil, nil
}

// sumGradientRange adds weights [lo, hi) of each part's gradient but
// part 0's to the blob's.
func (l *convBase[T]) sumGradientRange(_, lo, hi int) {
	c := &l.cpu
	for _, d := range c.wdiffs[1:c.sumParts] {
		mathfn.Axpy(hi-lo, 1, d[lo:hi], c.blobW[lo:hi])
	}
}
