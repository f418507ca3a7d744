package cuda

import "errors"

// ErrNoNVJPEG is the error of nvJPEG calls where nvJPEG cannot be used: a
// build without the `cuda` tag, or a machine without libnvjpeg. The error
// NewJPEGDecoder returns says which, and why.
var ErrNoNVJPEG = errors.New("cuda: nvJPEG is not available")

// ErrJPEGUnsupported is wrapped by the errors of a JPEGDecoder's
// DecodeBatch for a batch it cannot decode but the host can: an image its
// backend does not decode in a batch (the hardware decoder takes no
// progressive JPEGs), or one nvJPEG finds corrupt or unsupported. Nothing
// was written; decode the batch another way.
var ErrJPEGUnsupported = errors.New("cuda: nvJPEG cannot decode this batch")
