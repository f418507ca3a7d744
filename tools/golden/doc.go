// Package golden holds gocaffe's golden tests: fixtures written by BVLC
// Caffe (with golden_dump.cpp, built against libcaffe by build.sh) hold
// every blob's data and diff and every parameter's data and diff after one
// forward and one backward pass of a small net; the tests run the same nets
// in gocaffe and compare. The fixtures are checked in under testdata, so
// the tests need no Caffe; regenerate.sh rewrites them (see README.md).
//
// The package has no code of its own besides its tests.
package golden
