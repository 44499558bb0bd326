package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The root only routes (component.go): no method of Model assigns to a field of a component — it sends the
// component a message (its Update) or calls it, and the component changes its own state. A component is a type of
// this package with View and Scope methods (and what such a type embeds, as every dialog embeds box). A write the
// syntax cannot attribute — a field name both a component and another type of the package have, reached other
// than through one of Model's own fields — is refused too: rename it, or reach it through Model's field.
func TestTheRootWritesNoComponentsField(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	paths, _ := filepath.Glob("*.go")
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	methods := map[string][]string{}            // type → its methods
	structs := map[string]*ast.StructType{}     // type → its struct
	fieldType := map[string]map[string]string{} // type → field → the field's type name
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					methods[recvName(d)] = append(methods[recvName(d)], d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							structs[ts.Name.Name] = st
							fieldType[ts.Name.Name] = map[string]string{}
							for _, fl := range st.Fields.List {
								tn := typeName(fl.Type)
								for _, n := range fl.Names {
									fieldType[ts.Name.Name][n.Name] = tn
								}
								if len(fl.Names) == 0 {
									fieldType[ts.Name.Name][tn] = tn
								}
							}
						}
					}
				}
			}
		}
	}
	isComponent := map[string]bool{}
	for name := range structs {
		if ms := methods[name]; slices.Contains(ms, "View") && slices.Contains(ms, "Scope") {
			isComponent[name] = true
			for _, fl := range structs[name].Fields.List {
				if len(fl.Names) == 0 {
					isComponent[typeName(fl.Type)] = true // embedded: its fields are the component's
				}
			}
		}
	}
	if !isComponent["table"] || !isComponent["box"] || isComponent["Model"] {
		t.Fatalf("the components found are wrong: %v", isComponent)
	}
	componentField, otherField := map[string]bool{}, map[string]bool{}
	for name, fields := range fieldType {
		for f := range fields {
			if isComponent[name] {
				componentField[f] = true
			} else {
				otherField[f] = true
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv == nil || recvName(fd) != "Model" || len(fd.Recv.List[0].Names) == 0 {
				continue
			}
			recv := fd.Recv.List[0].Names[0].Name
			// Locals made of a type of this package that is no component (f := frame{…}, var f frame) are the
			// method's own values: writing them writes no component.
			plain := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for i, r := range n.Rhs {
						if cl, ok := r.(*ast.CompositeLit); ok && i < len(n.Lhs) && structs[typeName(cl.Type)] != nil && !isComponent[typeName(cl.Type)] {
							if id, ok := n.Lhs[i].(*ast.Ident); ok {
								plain[id.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					if tn := typeName(n.Type); structs[tn] != nil && !isComponent[tn] {
						for _, id := range n.Names {
							plain[id.Name] = true
						}
					}
				}
				return true
			})
			check := func(e ast.Expr) {
				sel, ok := e.(*ast.SelectorExpr)
				if !ok {
					return
				}
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == recv || plain[id.Name]) {
					return // the root's own field, or a value of the method's own
				}
				name := sel.Sel.Name
				if via, ok := sel.X.(*ast.SelectorExpr); ok {
					if id, ok := via.X.(*ast.Ident); ok && id.Name == recv {
						tn, own := fieldType["Model"][via.Sel.Name]
						switch {
						case own && isComponent[tn]:
							t.Errorf("%s: Model.%s writes %s.%s, a component's field: send it a message", fset.Position(e.Pos()), fd.Name.Name, via.Sel.Name, name)
							return
						case own:
							return // a field of a struct the root owns (its listing, its filter's state)
						}
					}
				}
				if componentField[name] {
					t.Errorf("%s: Model.%s writes .%s, a component's field: send it a message", fset.Position(e.Pos()), fd.Name.Name, name)
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					for _, l := range s.Lhs {
						check(l)
					}
				case *ast.IncDecStmt:
					check(s.X)
				}
				return true
			})
		}
	}
}

func recvName(fd *ast.FuncDecl) string { return typeName(fd.Recv.List[0].Type) }

// typeName is the name of a type expression: T, *T, pkg.T (its T), or "" for the rest.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.IndexExpr:
		return typeName(x.X)
	}
	return ""
}
