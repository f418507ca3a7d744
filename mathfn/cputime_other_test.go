//go:build !unix

package mathfn

// processCPUSeconds is 0 where the CPU time is not read.
func processCPUSeconds() float64 { return 0 }
