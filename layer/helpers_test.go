package layer_test

import (
	"fmt"
	"strconv"

	"github.com/gocaffe/gocaffe/blob"
)

type (
	blobF32 = blob.Blob[float32]
	blobF64 = blob.Blob[float64]
)

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func itoa(v int) string { return strconv.Itoa(v) }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
