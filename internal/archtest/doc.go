// Package archtest holds the tests of gocaffe's architecture, run with the
// rest by go test ./...: packages import only packages below them, in the
// order the folder list shows, and cgo and the cuda build tag stay inside
// package cuda. It has no code of its own.
package archtest
