//go:build !amd64 || purego

package layer

// reluVectorPrefix does nothing: this build has no vector kernel for the
// ReLU, the caller does it all.
func reluVectorPrefix[T Float](x, y []T) int { return 0 }
