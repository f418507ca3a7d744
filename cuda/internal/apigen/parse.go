package main

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// group is the files of one build constraint and the stubs that stand in
// for them in every other build.
type group struct {
	constraint string // the files' //go:build expression, as constraint.Expr's String writes it
	stubs      string // the file of stubs, built under !(constraint)
	err        string // what a stub returns for an error
	without    string // the builds the stubs serve, as their docs say it
}

// groups are the tagged files of package cuda. A tagged file whose
// constraint is not here is an error: its API would have no stubs.
var groups = []group{
	{"cuda", "nocuda.go", "ErrNoCUDA", "in a build without the `cuda` tag"},
	{"cuda && nccl", "nonccl.go", "ErrNoNCCL", "without the `cuda` and `nccl` tags"},
}

// sigTest is the file of signatures, compiled in every build.
const sigTest = "api_test.go"

// stubDirective, at the end of a declaration's doc comment, gives its
// stub's return statement instead of the zero values.
const stubDirective = "//apigen:stub "

// file is one parsed source file.
type file struct {
	name string
	ast  *ast.File
}

// method is a method declaration and the file it is in (whose imports
// its signature's package names refer to).
type method struct {
	decl *ast.FuncDecl
	file *ast.File
}

// pkg is the package as apigen reads it: every non-test source file but
// the generated ones, by group.
type pkg struct {
	fset    *token.FileSet
	tagged  [][]file // by group, in name order
	shared  []file   // untagged files, in every build
	types   map[string]*ast.TypeSpec
	methods map[string][]method // by receiver type name, in every file
	inAll   map[string]bool     // types declared in untagged files
}

// readPkg parses the package in dir.
func readPkg(dir string) (*pkg, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &pkg{
		fset:    token.NewFileSet(),
		tagged:  make([][]file, len(groups)),
		types:   map[string]*ast.TypeSpec{},
		methods: map[string][]method{},
		inAll:   map[string]bool{},
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || isOutput(name) {
			continue
		}
		if err := p.add(filepath.Join(dir, name)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// isOutput reports whether apigen writes the file called name.
func isOutput(name string) bool {
	return slices.ContainsFunc(groups, func(g group) bool { return g.stubs == name })
}

// add parses one file and files it by its build constraint. Generated
// files are apigen's own output (or another tool's) and are skipped.
func (p *pkg) add(path string) error {
	f, err := parser.ParseFile(p.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if ast.IsGenerated(f) {
		return nil
	}
	name := filepath.Base(path)
	expr, err := buildConstraint(f)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	p.index(f, expr == "")
	if expr == "" {
		p.shared = append(p.shared, file{name, f})
		return nil
	}
	i := slices.IndexFunc(groups, func(g group) bool { return g.constraint == expr })
	if i < 0 {
		return fmt.Errorf("%s: no stub file for the build constraint %q (add it to apigen's groups)", name, expr)
	}
	p.tagged[i] = append(p.tagged[i], file{name, f})
	return nil
}

// buildConstraint returns f's //go:build expression, "" if it has none.
func buildConstraint(f *ast.File) (string, error) {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				if err != nil {
					return "", err
				}
				return expr.String(), nil
			}
		}
	}
	return "", nil
}

// index records f's type declarations and methods.
func (p *pkg) index(f *ast.File, untagged bool) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					p.types[ts.Name.Name] = ts
					p.inAll[ts.Name.Name] = p.inAll[ts.Name.Name] || untagged
				}
			}
		case *ast.FuncDecl:
			if d.Recv != nil {
				name := recvTypeName(d.Recv.List[0].Type)
				p.methods[name] = append(p.methods[name], method{d, f})
			}
		}
	}
}

// recvTypeName returns the name of a receiver's type: T for T, *T, T[K].
func recvTypeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
