package main

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
)

// kind is what a type's zero value is written as.
type kind int

const (
	unknown   kind = iota // another package's named type: *new(T)
	numeric               // 0
	boolean               // false
	text                  // ""
	nilable               // nil
	composite             // T{}
)

// basicKinds are the predeclared types' kinds.
var basicKinds = map[string]kind{
	"bool": boolean, "string": text, "error": nilable, "any": nilable,
	"int": numeric, "int8": numeric, "int16": numeric, "int32": numeric, "int64": numeric,
	"uint": numeric, "uint8": numeric, "uint16": numeric, "uint32": numeric, "uint64": numeric,
	"uintptr": numeric, "byte": numeric, "rune": numeric,
	"float32": numeric, "float64": numeric, "complex64": numeric, "complex128": numeric,
}

// zero returns the zero value of type t, written as its kind wants.
func (p *pkg) zero(t ast.Expr) string {
	switch p.kindOf(t, 0) {
	case numeric:
		return "0"
	case boolean:
		return "false"
	case text:
		return `""`
	case nilable:
		return "nil"
	case composite:
		return exprString(p.fset, t) + "{}"
	}
	return "*new(" + exprString(p.fset, t) + ")"
}

// kindOf returns the kind of type t, following the package's named types
// to their definitions (depth guards against a cycle, which the compiler
// would reject anyway).
func (p *pkg) kindOf(t ast.Expr, depth int) kind {
	switch t := t.(type) {
	case *ast.Ident:
		if k, ok := basicKinds[t.Name]; ok {
			return k
		}
		if ts, ok := p.types[t.Name]; ok && depth < 10 {
			return p.kindOf(ts.Type, depth+1)
		}
	case *ast.ParenExpr:
		return p.kindOf(t.X, depth)
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return nilable
	case *ast.ArrayType:
		if t.Len == nil {
			return nilable
		}
		return composite
	case *ast.StructType:
		return composite
	}
	return unknown
}

// exprString returns node n as gofmt writes it.
func exprString(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		panic(err) // printing a parsed node only fails on a broken AST
	}
	return b.String()
}
