package main

import (
	"fmt"
	"os"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// config is the run's settings, read from the GOCAFFE_ variables by
// loadSettings when run starts: the command is the one place that reads
// the environment (the library takes the value, on every context the
// command makes). docs/configuration.md lists the variables.
var config settings.Settings

// loadSettings reads the settings through lookup (os.LookupEnv) into
// config and applies the process's part of them: the kernel cache's
// directory. A value a variable does not take is an error naming the
// variable and its words.
func loadSettings(lookup func(string) (string, bool)) error {
	s, err := settings.FromLookup(lookup)
	if err != nil {
		return fmt.Errorf("%w\n(docs/configuration.md lists gocaffe's variables and their words)", err)
	}
	config = s
	cuda.SetCacheDir(s.CUDACache)
	if s != (settings.Settings{}) {
		glog.Infof("Settings: %v", s)
	}
	if s.GEMM == settings.GEMMOpenBLAS && !mathfn.LinkedBLAS {
		glog.Warningf("GOCAFFE_GEMM=openblas is ignored: this build links no BLAS for GEMM (build with -tags openblas)")
	}
	return nil
}

// hostContext returns a context of the host carrying the run's settings:
// what the commands hand the library where Caffe would use the CPU.
func hostContext() *device.Context {
	ctx := device.New(nil)
	ctx.SetSettings(config)
	return ctx
}

// lookupEnv is os.LookupEnv, the one source of the command's settings and
// of the launchers' variables (torchrun's RANK, WORLD_SIZE, ...; MPI's).
var lookupEnv = os.LookupEnv
