package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gocaffe/gocaffe/"

// levels places every package of the module: a package may import only
// packages of a lower level. Imports flow one way:
//
//	cmd -> solver -> net -> layer -> (data, filler, device) -> blob -> (syncedmem, mathfn, hdf5, lmdb) -> cuda
//
// with the schema, prototxt I/O, prototxt upgrading (netproto) and logging
// below everything, and the LMDB engine under data. A new package must be
// placed here.
var levels = map[string]int{
	"proto/caffepb":           0,
	"proto/onnxpb":            0, // ONNX's model format, for the export
	"protoio":                 0,
	"settings":                0, // the run-time settings, a value (standard library only)
	"internal/glog":           0, // the command's log format (a slog.Handler)
	"internal/logf":           0, // the library's printf-style lines to a *slog.Logger
	"internal/progress":       0,
	"internal/fileio":         -1, // reads of user files: regular files only, bounded in size
	"internal/sysmem":         -1, // how much memory the process can still allocate
	"mathfn/internal/gemmgen": 0,  // writes mathfn/gemm_amd64.s
	"mathfn/internal/neongen": 0,  // writes mathfn's arm64 assembly (NEON)
	"mathfn/internal/rows":    0,  // strided row copies and sums of im2col, in assembly
	"mathfn/internal/vec":     0,  // the layers' AVX-512 and NEON kernels (ReLU, LRN's powers, max pooling)
	"cuda/internal/apigen":    0,  // writes cuda's stubs and signature test (go generate)
	"cuda":                    1,
	"mpi":                     1, // the MPI binding, the only cgo but cuda's (mpi tag)
	"netproto":                1, // upgrading, filtering and split insertion of NetParameters
	"netspec":                 1, // nets written from Go code, and Caffe's text format
	"internal/mpitest":        2, // helpers of the tests run under mpirun
	"internal/cudatest":       2, // helpers of the GPU tests
	"internal/h5pytest":       2, // helpers of the tests against h5py
	"internal/logtest":        2, // a slog.Handler recording log lines, for tests
	"internal/kvtest":         2, // helpers of the tests of key-value stores (lmdb, data)
	"internal/badinput":       2, // hostile inputs for the hardening tests
	"internal/fuzzguard":      2, // bounds on fuzzed messages, for the fuzz targets
	"internal/randnet":        5, // random nets for the tests against Caffe and ONNX Runtime
	"syncedmem":               2,
	"mathfn":                  2,
	"hdf5":                    2,
	"lmdb":                    2, // the LMDB storage engine, data's LMDB backend
	"blob":                    3,
	"data":                    4,
	"filler":                  4,
	"device":                  4,
	"layer/internal/kit":      5, // what the layer families share below the contract
	"layer":                   6, // the contract: Layer, Base, specs, engines, fusion
	"parallel":                5, // communicators of data-parallel training, used by the solver
	"layer/datalayer":         7, // the families of layer types
	"layer/detection":         7,
	"layer/neuron":            7,
	"layer/normalization":     7,
	"layer/recurrent":         7,
	"layer/utility":           7,
	"layer/vision":            7,
	"layer/loss":              8, // its losses build their Softmax from the utility family
	"layer/all":               9, // registers every family
	"layer/layertest":         9, // helpers of the layer tests
	"net":                     10,
	"solver":                  11,
	"classify":                11, // a deploy net serving images
	"onnx":                    11, // nets exported to ONNX
	"pycaffe":                 12, // Caffe's Python interface: the cgo of the python tag
	"pycaffe/embed":           13, // links libpython into the gocaffe command (python tag)
	"pycaffe/extension":       13, // the module caffe._caffe as a shared library
	"cmd/gocaffe":             14,
	"models":                  12, // the reference models' tests
	"tools/golden":            12, // the tests against BVLC Caffe's fixtures
	"tools/infer":             12, // gocaffe against OpenCV's dnn on the deploy nets (docs/performance.md)
	"tools/gpu/mkjpeg":        0,  // synthetic JPEGs for the GPU data check (standard library only)
	"internal/archtest":       12,
}

type pkg struct {
	ImportPath                        string
	Imports                           []string
	GoFiles, CgoFiles, IgnoredGoFiles []string
	TestGoFiles, XTestGoFiles         []string
}

// list runs go list -json on the module's packages, with the given extra
// arguments.
func list(t *testing.T, args ...string) map[string]*pkg {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goTool, append(append([]string{"list", "-json"}, args...), module+"...")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := &pkg{}
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// Every package imports only packages of lower levels, in both builds.
func TestImportDirection(t *testing.T) {
	for _, tags := range [][]string{nil, {"-tags", "cuda"}} {
		build := strings.Join(tags, " ")
		for name, p := range list(t, tags...) {
			level, ok := levels[name]
			if !ok {
				t.Errorf("package %s has no level in archtest's table: place it in the import order", name)
				continue
			}
			for _, imp := range p.Imports {
				dep, ours := strings.CutPrefix(imp, module)
				if !ours {
					continue
				}
				if l, ok := levels[dep]; ok && l >= level {
					t.Errorf("%s (level %d) imports %s (level %d): imports must go down the order (go list %s)", name, level, dep, l, build)
				}
			}
		}
	}
}

// Only package cuda has cgo and files of the cuda build tag: every other
// package compiles the same files, its GPU halves included, in every build.
func TestCgoAndTheCUDATagOnlyInCUDA(t *testing.T) {
	plain, tagged := list(t), list(t, "-tags", "cuda")
	for name, p := range tagged {
		files := func(p *pkg) []string {
			return slices.Concat(p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles)
		}
		if name == "cuda" {
			if len(p.CgoFiles) == 0 {
				t.Errorf("package cuda has no cgo files with the cuda tag")
			}
			continue
		}
		if len(p.CgoFiles) > 0 {
			t.Errorf("package %s uses cgo (%v): only package cuda may", name, p.CgoFiles)
		}
		q, ok := plain[name]
		if !ok {
			t.Errorf("package %s exists only with the cuda tag", name)
			continue
		}
		if a, b := files(q), files(p); !slices.Equal(a, b) {
			t.Errorf("package %s compiles different files with the cuda tag: %v without, %v with", name, a, b)
		}
	}
}

// With the python tag, cgo over Python's C API stays in package pycaffe and
// the two packages that link it (the extension module, the command's
// interpreter); no other package changes.
func TestCgoOfThePythonTagOnlyInPycaffe(t *testing.T) {
	plain, tagged := list(t), list(t, "-tags", "python")
	cgo := map[string]bool{"pycaffe": true, "pycaffe/embed": true, "pycaffe/extension": true}
	for name, p := range tagged {
		if cgo[name] {
			if len(p.CgoFiles) == 0 {
				t.Errorf("package %s has no cgo files with the python tag", name)
			}
			continue
		}
		if len(p.CgoFiles) > 0 {
			t.Errorf("package %s uses cgo with the python tag (%v): only package pycaffe and its two may", name, p.CgoFiles)
		}
		if q := plain[name]; q == nil || !slices.Equal(q.GoFiles, p.GoFiles) {
			t.Errorf("package %s compiles different files with the python tag", name)
		}
	}
}

// With the mpi tag, package mpi is the one other package with cgo, and no
// other package changes: MPI reaches the rest only through package mpi.
func TestCgoOfTheMPITagOnlyInMPI(t *testing.T) {
	plain, tagged := list(t), list(t, "-tags", "mpi")
	for name, p := range tagged {
		if name == "mpi" {
			if len(p.CgoFiles) == 0 {
				t.Errorf("package mpi has no cgo files with the mpi tag")
			}
			continue
		}
		if len(p.CgoFiles) > 0 {
			t.Errorf("package %s uses cgo with the mpi tag (%v): only package mpi may", name, p.CgoFiles)
		}
		if q := plain[name]; q == nil || !slices.Equal(q.GoFiles, p.GoFiles) {
			t.Errorf("package %s compiles different files with the mpi tag", name)
		}
	}
}
