//go:build !amd64 || purego

package rows

func hasAVX2() bool       { return false }
func setAVX512(bool) bool { return false }
