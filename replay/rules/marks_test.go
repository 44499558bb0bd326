package rules_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/replay/rules"
)

func TestMarksReadWhatTheActionsWrite(t *testing.T) {
	t.Parallel()
	m := rules.MarksOf(map[string]string{"DrainCount": "2", "drainedat": "2026-11-30T12:00:00Z", "restoredFrom": "quarantine/S/a.json"})
	if !m.Drained() || m.Drains() != 2 || m.DrainedAt != "2026-11-30T12:00:00Z" || !m.Restored() || m.RestoredFrom != "quarantine/S/a.json" {
		t.Fatalf("marks in another case: %+v", m)
	}
	if m := rules.MarksOf(map[string]string{"drainCount": "x"}); !m.Drained() || m.Drains() != 0 || m.DrainCount != "x" || m.Restored() {
		t.Fatalf("a mark another tool wrote: %+v", m)
	}
}

// The metadata schema lives beside the rules: above replay, nothing reads or writes metadata by the schema's keys
// with blob's raw helpers — it asks rules.MarksOf (and an ack, rules' AckOf).
func TestTheMetadataSchemaIsReadInOnePlace(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../../tui", "../../cmd/deadletter", "../../internal/present"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				switch {
				case pkg == nil:
				case (pkg.Name == "blob" || pkg.Name == "store") && (sel.Sel.Name == "MetaGet" || sel.Sel.Name == "MetaWith"):
					t.Errorf("%s reads metadata raw (%s.%s): ask rules.MarksOf", path, pkg.Name, sel.Sel.Name)
				case (pkg.Name == "rules" || pkg.Name == "replay") && strings.HasPrefix(sel.Sel.Name, "Meta"):
					t.Errorf("%s uses the schema's key %s.%s: ask rules.MarksOf", path, pkg.Name, sel.Sel.Name)
				}
				return true
			})
			return nil
		})
	}
}
