//go:build amd64 && !purego

package rows

func hasAVX2() bool { return rowsAVX2 }

// setAVX512 sets whether Copy and Add take the AVX-512 kernels and returns
// the previous choice.
func setAVX512(on bool) bool {
	old := rowsAVX512
	rowsAVX512 = on
	return old
}
