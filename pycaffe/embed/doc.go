// Package embed links the Python interpreter (libpython, Debian's
// python3-dev) into a program, for package pycaffe to start when a net
// first needs a layer written in Python. The gocaffe command built with
// the python tag imports it, so that `gocaffe train` runs the Python
// layers of the nets it trains:
//
//	go build -tags python -o bin/gocaffe ./cmd/gocaffe
//	PYTHONPATH=python:. bin/gocaffe train --solver solver.prototxt
//
// The Python module that pycaffe loads into Python (pycaffe/extension)
// must not link libpython, which the interpreter that loads it already
// is; this package is what a program adds instead. Without the python tag
// it is empty.
package embed
