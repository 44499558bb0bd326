package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// frontEnds are the two front ends: they present what the session returns and carry out no action themselves.
var frontEnds = []string{"cmd/deadletter", "tui"}

// actsItself names what only the session may call: replay's actions, and the record's writer.
func actsItself(pkg, name string) bool {
	switch pkg {
	case "replay":
		for _, p := range []string{"Drain", "Restore", "Repair", "Acknowledge"} {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
	case "record":
		return name == "Recorder" || name == "Act" || name == "Intended" || name == "Outcomes"
	}
	return false
}

// The dashboard and the command line make the same session calls for every action (internal/session): neither
// names replay's actions (Drain…, Restore…, Repair…, Acknowledge…) or the record's writer in its production code.
func TestFrontEndsActOnlyThroughTheSession(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range frontEnds {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var sel *ast.SelectorExpr
				switch n := n.(type) {
				case *ast.CallExpr: // replay's actions, called
					if s, ok := n.Fun.(*ast.SelectorExpr); ok && isPkg(s.X, "replay") {
						sel = s
					}
				case *ast.SelectorExpr: // the record's writer, named at all
					if isPkg(n.X, "record") {
						sel = n
					}
				}
				if sel != nil && actsItself(sel.X.(*ast.Ident).Name, sel.Sel.Name) {
					t.Errorf("%s uses %s.%s: a front end acts through the session (internal/session), never itself", filepath.ToSlash(path[len(root)+1:]), sel.X.(*ast.Ident).Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

func isPkg(x ast.Expr, name string) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == name
}

// The storage backends know no record, no rule and no wording: what is above them imports them, never the reverse.
func TestTheStoreKnowsNoRecordRulesOrWords(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../store/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/record", "/replay/rules", "/internal/present", "/replay"} {
			if strings.HasSuffix(pkg, banned) || strings.Contains(pkg, banned+"/") {
				t.Errorf("the store links %s", pkg)
			}
		}
	}
}
