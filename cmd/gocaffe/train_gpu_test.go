package main

import (
	"testing"

	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// TestTrainKillResumeGPU is the end-to-end training in GPU mode: the loss
// falls, and a killed run resumed from its snapshot ends with the weights
// of an uninterrupted one.
func TestTrainKillResumeGPU(t *testing.T) {
	cudatest.Device(t)
	trainKillResume(t, "-gpu", "0")
}
