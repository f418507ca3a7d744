package archtest

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/settings"
)

// root returns the module's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod two folders up from internal/archtest: %v", err)
	}
	return dir
}

// goFiles calls f with every Go file of the module (its path relative to
// the module, slash-separated), whatever its build tags, leaving out
// hidden folders, testdata and what is not the module's (vendor, the
// device tool's toolchain, node_modules).
func goFiles(t *testing.T, f func(rel string, file *ast.File, fset *token.FileSet)) {
	t.Helper()
	top := root(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != top && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		f(filepath.ToSlash(rel), file, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readsEnvironment are the functions that read the process's environment,
// by the import path of their package.
var readsEnvironment = map[string][]string{
	"os":                    {"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
	"syscall":               {"Getenv", "Environ"},
	"golang.org/x/sys/unix": {"Getenv", "Environ"},
}

// mayReadEnvironment are the folders whose non-test files may read the
// environment, and why.
var mayReadEnvironment = map[string]string{
	// The command reads GOCAFFE_ variables into settings.Settings, once,
	// and the launchers' variables (torchrun's, MPI's) for the library.
	"cmd/": "the gocaffe command",
	// Test support: the test binary marks the processes mpirun starts for
	// a test (GOCAFFE_MPITEST_CHILD) and passes them its environment.
	// Only test binaries import it.
	"internal/mpitest/": "test support",
	// Test support too: a hardening test reruns itself in a child process
	// under an address-space limit, named by GOCAFFE_BADINPUT_LIMITED_TEST.
	"internal/badinput/": "test support",
}

// No library package reads the environment: settings come as values
// (settings.Settings on the device context), the launchers' variables
// through a lookup function, and only the command and test support reach
// for the process's environment. Test files may read it.
func TestNoEnvironmentInLibraries(t *testing.T) {
	for dir := range mayReadEnvironment {
		if _, err := os.Stat(filepath.Join(root(t), dir)); err != nil {
			t.Errorf("mayReadEnvironment names %s, which is gone: %v", dir, err)
		}
	}
	checked := 0
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		for dir := range mayReadEnvironment {
			if strings.HasPrefix(rel, dir) {
				return
			}
		}
		checked++
		for _, v := range envReads(file) {
			t.Errorf("%s:%d: %s reads the environment: library code takes settings.Settings (device.Context.Settings) or a lookup function instead; only cmd/gocaffe reads GOCAFFE_ variables",
				rel, fset.Position(v.Pos()).Line, v.name)
		}
	})
	if checked < 100 {
		t.Errorf("checked only %d files: is the walk finding the module?", checked)
	}
}

type envRead struct {
	ast.Node
	name string
}

// envReads returns the calls (and mentions) of the functions of
// readsEnvironment in file, through whatever name their package is
// imported under; a dot import of such a package counts as one.
func envReads(file *ast.File) []envRead {
	local := map[string]string{} // local name -> import path
	var out []envRead
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := readsEnvironment[path]; !ok {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			out = append(out, envRead{imp, "a dot import of " + path})
			continue
		}
		local[name] = path
	}
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if path, ok := local[x.Name]; ok && slices.Contains(readsEnvironment[path], sel.Sel.Name) {
			out = append(out, envRead{sel, path + "." + sel.Sel.Name})
		}
		return true
	})
	return out
}

// The check finds the reads, under other names too, and nothing else.
func TestEnvReads(t *testing.T) {
	src := `package p
import (
	"os"
	sys "syscall"
	"golang.org/x/sys/unix"
)
var _ = os.Getenv("A")
var _, _ = os.LookupEnv("B")
var _ = sys.Environ()
var _ = unix.Getenv
var _ = os.Getpid()
var _ = os.ExpandEnv("$C")
`
	file, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range envReads(file) {
		got = append(got, r.name)
	}
	want := []string{"os.Getenv", "os.LookupEnv", "syscall.Environ", "golang.org/x/sys/unix.Getenv", "os.ExpandEnv"}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
	dot, _ := parser.ParseFile(token.NewFileSet(), "q.go", `package q
import . "os"
`, 0)
	if len(envReads(dot)) != 1 {
		t.Errorf("a dot import of os was not counted")
	}
}

// gocaffeName is a GOCAFFE_ variable's name in a string or script.
var gocaffeName = regexp.MustCompile(`GOCAFFE_[A-Z0-9_]*[A-Z0-9]`)

// configurationDoc returns docs/configuration.md.
func configurationDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableRow returns the line of doc's tables whose first cell is `key`.
func tableRow(doc, key string) (string, bool) {
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line, true
		}
	}
	return "", false
}

// docs/configuration.md has a row for every variable of the settings
// table, with its words and default, and for every GOCAFFE_ variable the
// code or the scripts name; library code names none but the settings'.
func TestConfigurationDocumented(t *testing.T) {
	doc := configurationDoc(t)
	table := map[string]bool{}
	for _, v := range settings.Variables() {
		table[v.Name] = true
		row, ok := tableRow(doc, v.Name)
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", v.Name)
			continue
		}
		for _, w := range v.Words {
			if !strings.Contains(row, "`"+w+"`") {
				t.Errorf("docs/configuration.md: %s's row does not list its word `%s`: %s", v.Name, w, row)
			}
		}
		if first, _, _ := strings.Cut(v.Default, " "); !strings.Contains(row, first) {
			t.Errorf("docs/configuration.md: %s's row does not give its default %q: %s", v.Name, v.Default, row)
		}
	}
	// Every GOCAFFE_ name in a string literal of the Go code: the library
	// may name only the settings' variables; tests, test support and the
	// command's tests any variable the document lists.
	found := map[string]string{}
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		library := !strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, "internal/mpitest/") && !strings.HasPrefix(rel, "internal/badinput/")
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || !strings.Contains(lit.Value, "GOCAFFE_") {
				return true
			}
			at := rel + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
			names := gocaffeName.FindAllString(lit.Value, -1)
			if library && strings.Count(lit.Value, "GOCAFFE_") != len(names) {
				t.Errorf("%s: %s builds a GOCAFFE_ name this test cannot read: write the whole name", at, lit.Value)
			}
			for _, name := range names {
				found[name] = at
				if library && !table[name] {
					t.Errorf("%s: %s is not a variable of the settings table (settings.Variables): add it there, with its field, and to docs/configuration.md", at, name)
				}
			}
			return true
		})
	})
	// And those the scripts name.
	scripts, err := filepath.Glob(filepath.Join(root(t), "*", "*", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root(t), "*", "*.sh"))
	scripts = append(append(scripts, more...), filepath.Join(root(t), ".ci", "run"))
	for _, path := range scripts {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root(t), path)
		for _, name := range gocaffeName.FindAllString(string(b), -1) {
			found[name] = rel
		}
	}
	for _, name := range []string{"GOCAFFE_BN", "GOCAFFE_MAX_IMAGE_PIXELS", "GOCAFFE_FASHION_MNIST", "GOCAFFE_TAGS"} {
		if _, ok := found[name]; !ok {
			t.Errorf("the scan found no %s: is it reading the code?", name)
		}
	}
	for name, at := range found {
		if _, ok := tableRow(doc, name); !ok {
			t.Errorf("%s names %s, which docs/configuration.md has no row for", at, name)
		}
	}
}

// platformTags are the build tags Go sets from the platform (GOOS, GOARCH
// and the like), which docs/configuration.md does not list.
func platformTags(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	tags := map[string]bool{"unix": true, "cgo": true, "gc": true, "gccgo": true, "ignore": true}
	for _, pair := range strings.Fields(string(out)) {
		os, arch, _ := strings.Cut(pair, "/")
		tags[os], tags[arch] = true, true
	}
	return tags
}

// docs/configuration.md lists every build tag the code's //go:build lines
// name, but the platform's.
func TestBuildTagsDocumented(t *testing.T) {
	doc := configurationDoc(t)
	platform := platformTags(t)
	found := map[string]string{}
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		for _, group := range file.Comments {
			if group.Pos() > file.Package {
				break
			}
			for _, c := range group.List {
				if !constraint.IsGoBuild(c.Text) {
					continue
				}
				expr, err := constraint.Parse(c.Text)
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
				expr.Eval(func(tag string) bool {
					if !platform[tag] && !strings.HasPrefix(tag, "go1.") {
						found[tag] = rel
					}
					return true
				})
			}
		}
	})
	for _, tag := range []string{"cuda", "openblas"} {
		if _, ok := found[tag]; !ok {
			t.Errorf("the scan found no %s tag: is it reading the code?", tag)
		}
	}
	for tag, at := range found {
		if _, ok := tableRow(doc, tag); !ok {
			t.Errorf("%s builds with the tag %s, which docs/configuration.md's table of build tags has no row for", at, tag)
		}
	}
}
