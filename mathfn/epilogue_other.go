//go:build !amd64 || purego

package mathfn

// epilogueRows does nothing: this build has no vector epilogue, the Go
// loop applies it.
func epilogueRows[T Float](c []T, ldc, i0, i1, j0, j1 int, rowBias []T, relu bool) bool { return false }
