package cuda

// The API is declared once, in the files of the `cuda` tag (and of `cuda
// && nccl`). cuda/internal/apigen reads those declarations and writes:
//
//   - nocuda.go and nonccl.go, the stubs for the builds without them, each
//     with its declaration's doc comment and signature, returning
//     ErrNoCUDA (ErrNoNCCL) for an error and zero values for the rest;
//   - api_test.go, every exported function and method with its type,
//     compiled in every build, so both builds keep the signatures apigen
//     read.
//
// To add to the API, declare it in a tagged file and run
// `go generate ./cuda/`; CI fails while the generated files differ from
// what apigen writes. Where a stub must return something other than zero
// values, end the declaration's doc comment with a directive giving the
// stub's return statement, as Device.Ordinal does:
//
//	//apigen:stub return -1
//
// What every build shares (errors, Op, Dim3, DevicePtr, Args, the cuDNN
// enumerations, NCCLUniqueID) is declared once in the untagged files.

//go:generate go run ./internal/apigen
