//go:build python

package embed

// #cgo pkg-config: python3-embed
import "C"

import _ "github.com/gocaffe/gocaffe/pycaffe" // installs the runtime of Python layers
