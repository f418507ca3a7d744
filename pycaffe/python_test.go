package pycaffe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPython builds the Python package with python/build and the gocaffe
// command with the python tag, then runs the Python tests of
// python/test (unittest) against them: real CPython, real numpy, LMDB
// made by the command's convert_mnist_data. It takes minutes (two cgo
// builds, LeNet trained to 0.85 on Fashion-MNIST), so it runs only when
// GOCAFFE_PYTHON_TESTS=1 (CI's Python step); GOCAFFE_PYTHON names the
// interpreter (python3 by default).
func TestPython(t *testing.T) {
	if os.Getenv("GOCAFFE_PYTHON_TESTS") != "1" {
		t.Skip("the Python tests run with GOCAFFE_PYTHON_TESTS=1 (they build the package with python/build)")
	}
	py := os.Getenv("GOCAFFE_PYTHON")
	if py == "" {
		py = "python3"
		if exec.Command(py, "-c", "import numpy").Run() != nil {
			py = "/usr/bin/python3" // a python3 of its own (pyenv) ahead on PATH
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, env []string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	run(filepath.Join(root, "python", "build"), []string{"PYTHON=" + py})
	bin := filepath.Join(t.TempDir(), "gocaffe")
	run(goTool, nil, "build", "-tags", "python", "-o", bin, "./cmd/gocaffe")
	run(py, []string{
		"GOCAFFE_BIN=" + bin,
		"PYTHONPATH=" + filepath.Join(root, "python") + string(os.PathListSeparator) + filepath.Join(root, "python", "test"),
	}, "-m", "unittest", "discover", "-v", "-s", filepath.Join(root, "python", "test"), "-p", "test_*.py")
}
