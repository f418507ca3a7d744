//go:build !amd64 || purego

package mathfn

// taps9Prefix does nothing: this build has no vector kernels.
func taps9Prefix[T Float](out, p []T, off *[9]int, w *[9]T, n int, bias T, relu bool) int { return 0 }

// dots9Prefix does nothing: this build has no vector kernels.
func dots9Prefix[T Float](acc *[9]T, dy, p []T, off *[9]int, n int) int { return 0 }

// taps9S2Prefix does nothing: this build has no vector kernels.
func taps9S2Prefix[T Float](out []T, outStride int, p []T, step, wp int, w *[9]T, rows, n int, bias T, relu bool) int {
	return 0
}
