// Command extension is the CPython extension module caffe._caffe as a
// shared library: python/build builds it with
//
//	go build -tags python -buildmode=c-shared -o python/caffe/_caffe.<suffix>.so ./pycaffe/extension
//
// and Python loads it when the package caffe is imported (its PyInit__caffe
// comes from package pycaffe). Built as a program, without the python tag,
// it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "pycaffe/extension is the Python module caffe._caffe: build it with python/build (see docs/python.md)")
	os.Exit(2)
}
