package main

import (
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// A test binary built with the cuda tag tests a gocaffe built with it.
func init() {
	if cuda.Available() {
		buildArgs = []string{"-tags", "cuda"}
	}
}

// TestTrainKillResumeGPU is the end-to-end training in GPU mode: the loss
// falls, and a killed run resumed from its snapshot ends with the weights
// of an uninterrupted one.
func TestTrainKillResumeGPU(t *testing.T) {
	cudatest.Device(t)
	trainKillResume(t, "-gpu", "0")
}
