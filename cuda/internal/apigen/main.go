// Command apigen writes package cuda's API for the builds without CUDA, so
// that the API is declared once, in the `cuda`-tagged files:
//
//   - nocuda.go (//go:build !cuda): a stub of every exported type, function
//     and method of the files tagged `cuda`;
//   - nonccl.go (//go:build !(cuda && nccl)): the same for the files tagged
//     `cuda && nccl`;
//   - api_test.go (no tag): every exported function and method with its
//     signature, compiled in every build, so the CUDA build and the stubs
//     are held to the signatures apigen read.
//
// A stub keeps its declaration's doc comment and signature. Its body
// returns the group's error (ErrNoCUDA, ErrNoNCCL) for the last result if
// that is an error, and the zero value of every other result, unless the
// declaration's doc comment ends with a directive naming the stub's
// results:
//
//	// Ordinal returns the device's ordinal.
//	//
//	//apigen:stub return -1
//	func (d *Device) Ordinal() int { return d.ordinal }
//
// A stub type is a struct of the declaration's exported fields; the
// exported methods an unexported embedded type promotes become stub
// methods of the outer type.
//
// apigen reads the files with go/parser only (no type checking, no cgo),
// so it runs anywhere. It refuses what it cannot stub faithfully: an
// exported constant, variable or non-struct type in a tagged file (declare
// it in an untagged file: it is the same in every build), a C type in an
// exported signature or field, a generic function, a tagged file whose
// build constraint has no stub file.
//
// Run by `go generate ./cuda/` (see cuda/api.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the directory of package cuda")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}

// run writes the generated files of the package in dir.
func run(dir string) error {
	out, err := generate(dir)
	if err != nil {
		return err
	}
	for _, f := range out {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
