package rules_test

import (
	"go/build"
	"strings"
	"testing"
)

// The rules are apart from the actions: package rules imports no store — not directly, not through another of
// deadletter's packages — and nothing that does I/O, so a rule cannot touch the container, the disk, the network
// or the environment. The operations over a container live in replay, which uses the rules.
func TestTheRulesImportNoStoreAndDoNoIO(t *testing.T) {
	t.Parallel()
	const module = "github.com/deadletter/deadletter/"
	io := map[string]bool{"os": true, "os/exec": true, "os/user": true, "io/fs": true, "net": true, "net/http": true,
		"syscall": true, "path/filepath": true, "io/ioutil": true}
	seen := map[string]bool{}
	var walk func(path, via string)
	walk = func(path, via string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Import(path, ".", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, module+"store"):
				t.Errorf("%s imports %s%s: the rules must not reach the store", path, imp, via)
			case strings.HasPrefix(imp, module):
				walk(imp, " (through "+path+")")
			case io[imp]:
				t.Errorf("%s imports %s%s: the rules do no I/O", path, imp, via)
			}
		}
	}
	walk(module+"replay/rules", "")
	if len(seen) < 2 {
		t.Fatalf("walked %d packages: the walk found nothing to check", len(seen))
	}
}
