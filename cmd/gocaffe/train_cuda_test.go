//go:build cuda

package main

import "testing"

func init() { buildArgs = []string{"-tags", "cuda"} }

// TestTrainKillResumeGPU is the end-to-end training in GPU mode: the loss
// falls, and a killed run resumed from its snapshot ends with the weights
// of an uninterrupted one.
func TestTrainKillResumeGPU(t *testing.T) { trainKillResume(t, "-gpu", "0") }
