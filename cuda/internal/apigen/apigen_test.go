package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cudaDir is package cuda, two levels up.
const cudaDir = "../.."

// The committed stubs and signature test are what apigen writes from the
// committed declarations: a tagged declaration changed without
// `go generate ./cuda/`, or a generated file edited by hand, fails here.
func TestGeneratedFilesUpToDate(t *testing.T) {
	out, err := generate(cudaDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out {
		have, err := os.ReadFile(filepath.Join(cudaDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, f.src) {
			t.Errorf("cuda/%s is not what apigen writes from the tagged files: run go generate ./cuda/", f.name)
		}
	}
}

// Package cuda type-checks in the builds with its tags, the signature test
// included: the tagged declarations have the signatures apigen read. CI has
// no CUDA headers, so cgo's package C is faked and function bodies are
// skipped; only declarations are checked, which is what the stubs mirror.
// The build without tags is checked by compiling it (go vet, go test).
func TestTaggedBuildsTypeCheck(t *testing.T) {
	for _, tags := range [][]string{{"cuda"}, {"cuda", "nccl"}} {
		if errs := typeCheck(t, cudaDir, tags); len(errs) > 0 {
			t.Errorf("-tags %s: %s", strings.Join(tags, ","), strings.Join(errs, "\n"))
		}
	}
}

// exportImporter imports the packages of paths (and what they import)
// from the export data the go command writes for them, as the compiler
// does; the build cache makes that quick where type-checking them from
// source is not.
func exportImporter(t *testing.T, fset *token.FileSet, paths []string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, paths...)
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	export := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "=")
		export[path] = file
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := export[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// imports returns the paths the files import, but cgo's C.
func imports(files []*ast.File) []string {
	seen := map[string]bool{}
	for _, f := range files {
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && p != "C" {
				seen[p] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// typeCheck type-checks the package in dir as built with tags, with
// sigTest as its only test file, and returns the errors.
func typeCheck(t *testing.T, dir string, tags []string) []string {
	t.Helper()
	ctx := build.Default
	ctx.BuildTags = tags
	ctx.CgoEnabled = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") && name != sigTest {
			continue
		}
		if ok, err := ctx.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var errs []string
	conf := types.Config{
		FakeImportC:      true,
		IgnoreFuncBodies: true,
		Importer:         exportImporter(t, fset, imports(files)),
		Error:            func(err error) { errs = append(errs, err.Error()) },
	}
	conf.Check(files[0].Name.Name, fset, files, nil)
	return errs
}

// writePkg writes a package of the given files into a new directory.
func writePkg(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shared is the untagged file of the test packages: the errors and the
// types every build has.
const shared = `package fake

import "errors"

var (
	ErrNoCUDA = errors.New("no CUDA")
	ErrNoNCCL = errors.New("no NCCL")
)

type (
	Ptr    uintptr
	Pair   struct{ A, B int }
	ID     [4]byte
	Name   string
	Flag   bool
	Shared struct{}
	common struct{}
)

func (Shared) Hello()       {}
func (common) Common() int { return 1 }
`

// device is a tagged file with one of each thing apigen must stub.
const device = `//go:build cuda

package fake

import (
	"time"
	ctx "context"
)

// Dev is a device.
type Dev struct {
	inner
	*viaPtr
	common
	Shared
	// Label names the device.
	Label    string ` + "`json:\"label\"`" + ` // a label
	n, Count int
}

type inner struct{}

// Close closes.
//
//apigen:stub return nil
func (i *inner) Close() error { return nil }

// Kind is promoted by value.
func (inner) Kind() Name { return "" }

type viaPtr struct{}

// Pair is promoted through a pointer.
func (v *viaPtr) Pair() Pair { return Pair{} }

// Open opens a device.
func Open(n int, opts ...string) (*Dev, error) { return &Dev{}, nil }

// Wait waits.
func (d *Dev) Wait(c ctx.Context, t time.Duration) (ok Flag, left time.Duration, err error) {
	return true, 0, nil
}

// Values returns one of each kind.
func (d Dev) Values() (ID, Name, []byte, map[string]int, func(), chan int, any, [2]int, Ptr, *Pair, Pair, error) {
	return ID{}, "", nil, nil, nil, nil, nil, [2]int{}, 0, nil, Pair{}, nil
}

// Handle has a stub of its own.
//
//apigen:stub return -1, nil
func (d *Dev) Handle() (int, error) { return 1, nil }

// Reset returns nothing.
func (d *Dev) Reset() {}

func (d *Dev) hidden() {}

func helper() int { return 0 }
`

// comm is a file of the second group.
const comm = `//go:build cuda && nccl

package fake

// Comm is a communicator.
type Comm struct{ dev *Dev }

// NewComm makes one.
func NewComm(d *Dev) (*Comm, error) { return &Comm{d}, nil }
`

// The stubs of a package with one of each thing apigen handles say what
// they should, and the package type-checks in every build, the signature
// test included.
func TestStubs(t *testing.T) {
	dir := writePkg(t, map[string]string{"shared.go": shared, "dev_cuda.go": device, "comm_cuda.go": comm})
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	stubs := readFile(t, dir, "nocuda.go")
	for _, want := range []string{
		"// Code generated by apigen",
		"//go:build !cuda\n",
		"import (\n\tctx \"context\"\n\t\"time\"\n)",
		"type Dev struct {\n\tcommon\n\tShared\n\t// Label names the device.\n\tLabel string `json:\"label\"` // a label\n\tCount int\n}",
		"// Close closes.\n//\n// In a build without the `cuda` tag it returns nil.\nfunc (d *Dev) Close() error { return nil }",
		"func (d Dev) Kind() Name { return \"\" }",
		"func (d Dev) Pair() Pair { return Pair{} }",
		"func Open(n int, opts ...string) (*Dev, error) { return nil, ErrNoCUDA }",
		"return false, *new(time.Duration), ErrNoCUDA",
		"return ID{}, \"\", nil, nil, nil, nil, nil, [2]int{}, 0, nil, Pair{}, ErrNoCUDA",
		"func (d *Dev) Handle() (int, error) { return -1, nil }",
		"// In a build without the `cuda` tag it does nothing.\nfunc (d *Dev) Reset() {}",
	} {
		if !strings.Contains(stubs, want) {
			t.Errorf("nocuda.go lacks\n%s\nin\n%s", want, stubs)
		}
	}
	for _, absent := range []string{"hidden", "helper", "inner", "viaPtr", "Hello", "Common", "apigen:stub return"} {
		if strings.Contains(stubs, absent) {
			t.Errorf("nocuda.go has %q:\n%s", absent, stubs)
		}
	}
	nccl := readFile(t, dir, "nonccl.go")
	for _, want := range []string{"//go:build !(cuda && nccl)\n", "type Comm struct{}", "{ return nil, ErrNoNCCL }"} {
		if !strings.Contains(nccl, want) {
			t.Errorf("nonccl.go lacks %q:\n%s", want, nccl)
		}
	}
	sig := readFile(t, dir, sigTest)
	for _, want := range []string{"= func(x *Dev) *string { return &x.Label }", "func(int, ...string) (*Dev, error)", "= (*Dev).Close", "= Dev.Kind"} {
		if !strings.Contains(sig, want) {
			t.Errorf("%s lacks %q:\n%s", sigTest, want, sig)
		}
	}
	for _, tags := range [][]string{nil, {"cuda"}, {"cuda", "nccl"}} {
		if errs := typeCheck(t, dir, tags); len(errs) > 0 {
			t.Errorf("-tags %s: %s", strings.Join(tags, ","), strings.Join(errs, "\n"))
		}
	}
}

// Running apigen again on its own output changes nothing: the generated
// files are skipped as input and written byte for byte the same.
func TestStable(t *testing.T) {
	dir := writePkg(t, map[string]string{"shared.go": shared, "dev_cuda.go": device, "comm_cuda.go": comm})
	first, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	second, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if !bytes.Equal(first[i].src, second[i].src) {
			t.Errorf("%s changed when generated again", first[i].name)
		}
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What apigen cannot stub faithfully is an error naming the declaration,
// not a stub that differs from it.
func TestRejects(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"exported constant", "const Max = 1", "exported const Max"},
		{"exported variable", "var Count int", "exported var Count"},
		{"non-struct type", "type Mode int", "exported type Mode"},
		{"C type in a signature", "import \"C\"\n\nfunc Raw() C.int { return 0 }", "Raw: its signature has a C type"},
		{"C type in a field", "import \"C\"\n\ntype H struct{ P C.int }", "field H.P has a C type"},
		{"generic function", "func Map[T any](x T) T { return x }", "Map: a generic function"},
		{"unimported package", "func Wait(d time.Duration) {}", "package time is not imported"},
		{"directive of the wrong count", "//apigen:stub return 1\nfunc Two() (int, error) { return 0, nil }", "want one return statement of 2 results"},
		{"unknown directive", "//apigen:stubs return 1\nfunc One() int { return 0 }", "apigen knows only"},
		{"directive that does not parse", "//apigen:stub return (\nfunc One() int { return 0 }", "apigen:stub return ("},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writePkg(t, map[string]string{"shared.go": shared, "x_cuda.go": "//go:build cuda\n\npackage fake\n\n" + c.src + "\n"})
			_, err := generate(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	t.Run("build constraint without stubs", func(t *testing.T) {
		dir := writePkg(t, map[string]string{"shared.go": shared, "x_linux.go": "//go:build linux\n\npackage fake\n"})
		if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), `no stub file for the build constraint "linux"`) {
			t.Errorf("error %v, want the constraint named", err)
		}
	})
}
