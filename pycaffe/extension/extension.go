//go:build python

package main

import "C" // a c-shared library's main package is a cgo one

import _ "github.com/gocaffe/gocaffe/pycaffe" // the module and its exported functions
