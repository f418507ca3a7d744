// Package archtest holds the tests of gocaffe's architecture, run with the
// rest by go test ./...: packages import only packages below them, in the
// order the folder list shows; cgo and the cuda build tag stay inside
// package cuda; no library package reads the environment (settings travel
// as values, package settings); and docs/configuration.md lists every
// GOCAFFE_ variable and build tag the code names. It has no code of its
// own.
package archtest
