package testkit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxComplexity is the bar docs/development.md states: no production function is over it.
const maxComplexity = 20

// overTheBar are the functions allowed past it, each at most the complexity it has: JSON's byte scanners, each a
// state machine over the grammar's bytes that reads best whole, and the debts found when this test was written,
// which may shrink (lower the number, or take the entry off) but never grow. A new function over the bar fails.
var overTheBar = map[string]int{
	// The scanners.
	"internal/jsjson/scan.go: scan":           43,
	"internal/jsjson/scan.go: scanNumber":     23,
	"internal/jsjson/scan.go: knownKey":       22,
	"internal/jsjson/scan.go: appendUnquoted": 22,
	// Debts.
	"internal/azmonitor/azmonitor.go: add": 29,
}

// complexity is a function's cyclomatic complexity as gocyclo counts it: one, plus one per if, for, range,
// non-default case, non-default select case, && and || (closures inside count toward the function).
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t, star := fn.Recv.List[0].Type, ""
	if s, ok := t.(*ast.StarExpr); ok {
		t, star = s.X, "*"
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	return fmt.Sprintf("(%s%s).%s", star, t.(*ast.Ident).Name, fn.Name.Name)
}

// The complexity claim of docs/development.md, kept true: every function of the module's production code (and
// the deploy module's) is at most maxComplexity, but those overTheBar names, each within its ceiling — and each of
// those is still over the bar, so the list says what the code is.
func TestNoFunctionIsOverTheComplexityBar(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := rel + ": " + funcName(fn)
			c := complexity(fn)
			if ceiling, listed := overTheBar[name]; listed {
				seen[name] = c > maxComplexity
				if c > ceiling {
					t.Errorf("%s has cyclomatic complexity %d, over the %d it is allowed: split it", name, c, ceiling)
				}
				continue
			}
			if c > maxComplexity {
				t.Errorf("%s has cyclomatic complexity %d, over %d: split it (docs/development.md)", name, c, maxComplexity)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for name := range overTheBar {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	for _, name := range stale {
		t.Errorf("%s is listed as over the bar but is not (or is gone): take it off overTheBar", name)
	}
}

// The counter counts as gocyclo does.
func TestComplexityCountsAsGocyclo(t *testing.T) {
	src := `package p
func f(a, b bool, xs []int, ch chan int) {
	if a && b || a {}
	for range xs {}
	for i := 0; i < 1; i++ {}
	switch { case a: ; case b: ; default: }
	select { case <-ch: ; default: }
	_ = func() { if b {} }
}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 1 + if + && + || + range + for + 2 cases + 1 select case + the closure's if
	if got := complexity(f.Decls[0].(*ast.FuncDecl)); got != 10 {
		t.Fatalf("complexity %d, want 10", got)
	}
}

// docs/development.md's map names every package of the module (and the deploy module's): a new package is added
// to it, a removed one taken off.
func TestTheMapNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(doc), "```\n")
	end := strings.Index(string(doc)[start+4:], "```")
	m := string(doc)[start : start+4+end]
	named := map[string]bool{}
	for _, line := range strings.Split(m, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], "/") {
			named[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || strings.HasPrefix(rel, "deploy") {
			return skipUnlessRoot(rel) // deploy is one entry: its own module
		}
		if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) > 0 && rel != "." && !named[rel] {
			t.Errorf("docs/development.md's map does not name %s/", rel)
		}
		return nil
	})
	for dir := range named {
		if _, err := os.Stat(filepath.Join(root, dir)); err != nil && !strings.HasPrefix(dir, "deploy") && !strings.HasPrefix(dir, ".") {
			t.Errorf("docs/development.md's map names %s/, which is gone", dir)
		}
	}
}

func skipUnlessRoot(rel string) error {
	if rel == "." {
		return nil
	}
	return filepath.SkipDir
}
