package layer

// SetConvBatchElems bounds the batched GPU convolution's buffers (tests use
// it to force several chunks) and returns a function restoring the bound.
func SetConvBatchElems(n int) (restore func()) {
	old := convBatchElems
	convBatchElems = n
	return func() { convBatchElems = old }
}
