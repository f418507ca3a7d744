package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// typeStub is an exported struct type of the tagged files.
type typeStub struct {
	name   string
	doc    []string
	fields []*ast.Field // those every build has (see keepField)
}

// funcStub is an exported function, or an exported method of an exported
// type (declared on it or promoted to it from an embedded type).
type funcStub struct {
	name     string
	doc      []string
	recvName string // "" for a function
	recvType string // "*Device", "Device"; "" for a function
	typ      *ast.FuncType
	results  []string // the stub's result expressions
}

// api is one group's exported declarations, in the order of its files.
type api struct {
	group   group
	files   []string
	decls   []any             // *typeStub and *funcStub
	imports map[string]string // path by name, of the packages the declarations name
}

// api collects the exported declarations of group gi's files.
func (p *pkg) api(gi int) (*api, error) {
	a := &api{group: groups[gi], imports: map[string]string{}}
	for _, f := range p.tagged[gi] {
		a.files = append(a.files, f.name)
		for _, d := range f.ast.Decls {
			if err := p.collect(a, f.ast, d); err != nil {
				return nil, fmt.Errorf("%s: %v", f.name, err)
			}
		}
	}
	return a, nil
}

// collect adds declaration d of file f to a, if it is exported.
func (p *pkg) collect(a *api, f *ast.File, d ast.Decl) error {
	switch d := d.(type) {
	case *ast.GenDecl:
		return p.collectGen(a, f, d)
	case *ast.FuncDecl:
		return p.collectFunc(a, f, d)
	}
	return nil
}

// collectGen adds the exported types of d. An exported constant or
// variable has no place here: it would be the same in every build, so it
// belongs in an untagged file.
func (p *pkg) collectGen(a *api, f *ast.File, d *ast.GenDecl) error {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.IsExported() {
					return fmt.Errorf("exported %s %s: declare it in an untagged file, as it is the same in every build", d.Tok, n.Name)
				}
			}
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			doc := s.Doc
			if doc == nil && len(d.Specs) == 1 {
				doc = d.Doc
			}
			if err := p.collectType(a, f, s, doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// collectType adds exported type s and the methods it gets from the
// embedded types the stubs drop.
func (p *pkg) collectType(a *api, f *ast.File, s *ast.TypeSpec, doc *ast.CommentGroup) error {
	st, ok := s.Type.(*ast.StructType)
	if !ok || s.TypeParams != nil || s.Assign.IsValid() {
		return fmt.Errorf("exported type %s: only non-generic struct types can be stubbed; declare others in an untagged file", s.Name.Name)
	}
	t := &typeStub{name: s.Name.Name, doc: docLines(doc)}
	a.decls = append(a.decls, t)
	var dropped []*ast.Field
	for _, fld := range st.Fields.List {
		kept := p.keepField(fld)
		switch {
		case kept == nil && len(fld.Names) == 0:
			dropped = append(dropped, fld)
		case kept == nil:
		case usesC(kept.Type):
			return fmt.Errorf("field %s.%s has a C type", t.name, fieldName(kept))
		default:
			if err := addImports(a, f, kept.Type); err != nil {
				return err
			}
			t.fields = append(t.fields, kept)
		}
	}
	return p.promote(a, t.name, dropped)
}

// fieldName returns a field's names, or the name of the type it embeds.
func fieldName(fld *ast.Field) string {
	if len(fld.Names) == 0 {
		return recvTypeName(fld.Type)
	}
	var names []string
	for _, n := range fld.Names {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// keepField returns the part of field fld every build has: its exported
// names, or the field itself if it embeds a type every build declares (an
// exported type, which a stub stands in for, another package's, or one of
// an untagged file). It returns nil for what only the tagged build has.
func (p *pkg) keepField(fld *ast.Field) *ast.Field {
	if len(fld.Names) == 0 {
		name := recvTypeName(fld.Type)
		if _, sel := unstar(fld.Type).(*ast.SelectorExpr); sel || ast.IsExported(name) || p.inAll[name] {
			return fld
		}
		return nil
	}
	var names []*ast.Ident
	for _, n := range fld.Names {
		if n.IsExported() {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	kept := *fld
	kept.Names = names
	return &kept
}

// promote adds, as methods of type outer, the exported methods of the
// embedded types the stub of outer drops, where outer declares none of the
// same name.
func (p *pkg) promote(a *api, outer string, embedded []*ast.Field) error {
	own := map[string]bool{}
	for _, m := range p.methods[outer] {
		own[m.decl.Name.Name] = true
	}
	recvName := receiverName(p.methods[outer], outer)
	for _, fld := range embedded {
		_, viaPtr := fld.Type.(*ast.StarExpr)
		for _, m := range p.methods[recvTypeName(fld.Type)] {
			if !m.decl.Name.IsExported() || own[m.decl.Name.Name] {
				continue
			}
			recvType := outer
			if _, ptr := m.decl.Recv.List[0].Type.(*ast.StarExpr); ptr && !viaPtr {
				recvType = "*" + outer
			}
			if err := p.addFunc(a, m, recvName, recvType); err != nil {
				return err
			}
		}
	}
	return nil
}

// receiverName returns the receiver name the methods of type t use, or
// its initial in lower case if they name none.
func receiverName(methods []method, t string) string {
	for _, m := range methods {
		if names := m.decl.Recv.List[0].Names; len(names) > 0 && names[0].Name != "_" {
			return names[0].Name
		}
	}
	return strings.ToLower(t[:1])
}

// collectFunc adds d if it is an exported function or an exported method
// of an exported type.
func (p *pkg) collectFunc(a *api, f *ast.File, d *ast.FuncDecl) error {
	if !d.Name.IsExported() {
		return nil
	}
	if d.Recv == nil {
		return p.addFunc(a, method{d, f}, "", "")
	}
	recv := d.Recv.List[0]
	if !ast.IsExported(recvTypeName(recv.Type)) {
		return nil
	}
	recvName := "_"
	if len(recv.Names) > 0 {
		recvName = recv.Names[0].Name
	}
	return p.addFunc(a, method{d, f}, recvName, exprString(p.fset, recv.Type))
}

// addFunc adds the stub of m, a method of recvType if that is not "".
func (p *pkg) addFunc(a *api, m method, recvName, recvType string) error {
	d := m.decl
	if d.Type.TypeParams != nil || strings.ContainsAny(recvType, "[]") {
		return fmt.Errorf("%s: a generic function cannot be stubbed", d.Name.Name)
	}
	if usesC(d.Type) {
		return fmt.Errorf("%s: its signature has a C type", d.Name.Name)
	}
	if err := addImports(a, m.file, d.Type); err != nil {
		return fmt.Errorf("%s: %v", d.Name.Name, err)
	}
	results, err := p.stubResults(a.group, d)
	if err != nil {
		return fmt.Errorf("%s: %v", d.Name.Name, err)
	}
	a.decls = append(a.decls, &funcStub{
		name:     d.Name.Name,
		doc:      docLines(d.Doc),
		recvName: recvName,
		recvType: recvType,
		typ:      d.Type,
		results:  results,
	})
	return nil
}

// stubResults returns what d's stub returns: the results its directive
// names, or else g's error for a last result of type error and the zero
// value for every other result.
func (p *pkg) stubResults(g group, d *ast.FuncDecl) ([]string, error) {
	types := fieldTypes(d.Type.Results)
	dir, ok, err := directive(d.Doc)
	if err != nil {
		return nil, err
	}
	if ok {
		return directiveResults(dir, len(types))
	}
	var out []string
	for i, t := range types {
		if id, ok := t.(*ast.Ident); ok && id.Name == "error" && i == len(types)-1 {
			out = append(out, g.err)
			continue
		}
		out = append(out, p.zero(t))
	}
	return out, nil
}

// directive returns the text after "//apigen:stub " in doc, if any. Any
// other apigen directive is a mistake, not something to skip quietly.
func directive(doc *ast.CommentGroup) (string, bool, error) {
	if doc == nil {
		return "", false, nil
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, stubDirective); ok {
			return strings.TrimSpace(rest), true, nil
		}
		if strings.HasPrefix(c.Text, "//apigen:") {
			return "", false, fmt.Errorf("%s: apigen knows only %q", c.Text, stubDirective+"return ...")
		}
	}
	return "", false, nil
}

// directiveResults returns the expressions of a directive's return
// statement, which must give n results.
func directiveResults(dir string, n int) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p; func _() { "+dir+" }", 0)
	if err != nil {
		return nil, fmt.Errorf("%s%s: %v", stubDirective, dir, err)
	}
	body := f.Decls[0].(*ast.FuncDecl).Body.List
	ret, ok := body[0].(*ast.ReturnStmt)
	if len(body) != 1 || !ok || len(ret.Results) != n {
		return nil, fmt.Errorf("%s%s: want one return statement of %d results", stubDirective, dir, n)
	}
	var out []string
	for _, e := range ret.Results {
		out = append(out, exprString(fset, e))
	}
	return out, nil
}

// docLines returns the lines of a doc comment but its directives (which
// gofmt keeps at the end): //apigen:stub, and any cgo or compiler
// directive, which the stubs must not carry.
func docLines(doc *ast.CommentGroup) []string {
	if doc == nil {
		return nil
	}
	var out []string
	for _, c := range doc.List {
		if isDirective(c.Text) {
			continue
		}
		out = append(out, c.Text)
	}
	for len(out) > 0 && out[len(out)-1] == "//" {
		out = out[:len(out)-1]
	}
	return out
}

// isDirective reports whether a comment line is a directive as go/doc
// defines one: //export, //extern, //line, or //word:word.
func isDirective(line string) bool {
	text, ok := strings.CutPrefix(line, "//")
	if !ok {
		return false
	}
	for _, p := range []string{"export ", "extern ", "line "} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	word, rest, ok := strings.Cut(text, ":")
	return ok && word != "" && rest != "" && isLowerWord(word) && isLowerWord(rest[:1])
}

// isLowerWord reports whether s is made of lower-case ASCII letters and
// digits only.
func isLowerWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// fieldTypes returns the type of each entry of a parameter or result
// list, a type once per name.
func fieldTypes(fl *ast.FieldList) []ast.Expr {
	if fl == nil {
		return nil
	}
	var out []ast.Expr
	for _, f := range fl.List {
		for range max(len(f.Names), 1) {
			out = append(out, f.Type)
		}
	}
	return out
}

// usesC reports whether e names anything of cgo's package C.
func usesC(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "C" {
				found = true
			}
		}
		return !found
	})
	return found
}

// addImports records in a the packages e names, as file f imports them.
func addImports(a *api, f *ast.File, e ast.Node) error {
	var err error
	ast.Inspect(e, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || err != nil {
			return err == nil
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, found := importPath(f, id.Name)
		if !found {
			err = fmt.Errorf("package %s is not imported", id.Name)
			return false
		}
		a.imports[id.Name] = path
		return false
	})
	return err
}

// importPath returns the path of the package f imports as name. A package
// imported without a name is taken to be called after its path's last
// element, as every package of the standard library is.
func importPath(f *ast.File, name string) (string, bool) {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		as := path.Base(p)
		if imp.Name != nil {
			as = imp.Name.Name
		}
		if as == name {
			return p, true
		}
	}
	return "", false
}

// unstar returns e without a leading *.
func unstar(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}
