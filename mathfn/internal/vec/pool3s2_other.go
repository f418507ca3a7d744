//go:build !amd64 || purego

package vec

// HasPool3x3S2 is false: this build has no vector kernel for 3x3 pooling.
const HasPool3x3S2 = false

// MaxPool3x3S2 has no kernel in this build.
func MaxPool3x3S2(g Pool3x3S2, n int, x, y, idx []float32) bool { return false }

// AvePool3x3S2 has no kernel in this build.
func AvePool3x3S2(g Pool3x3S2, n int, x, y []float32) bool { return false }

// AvePool3x3S2Back has no kernel in this build.
func AvePool3x3S2Back(g Pool3x3S2, n int, dy, dx []float32) bool { return false }

// MaxPool3x3S2Back has no kernel in this build.
func MaxPool3x3S2Back(g Pool3x3S2, n int, dy, idx, dx []float32) bool { return false }
