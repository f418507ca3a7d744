//go:build !amd64 || purego

package layer

// rowVectorPrefix is 0: this build has no row kernels.
func rowVectorPrefix[T Float](x []T) int { return 0 }

func mulRowVector[T Float](x, y []T, k int, f T)       {}
func mulAddRowVector[T Float](x, y []T, k int, f, b T) {}
func axpyRowVector[T Float](x, y []T, k int, f T)      {}
