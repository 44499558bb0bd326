package rules_test

import (
	"testing"

	"github.com/deadletter/deadletter/replay/rules"
)

// Every reason has a code of its own, and the code names it back: a record keeps the code, so two kinds sharing
// one, or a kind without one, would change what history says.
func TestEveryReasonHasItsOwnCode(t *testing.T) {
	t.Parallel()
	seen := map[string]rules.ReasonKind{}
	for k := rules.ReasonNone + 1; k <= rules.ReasonAckChanged; k++ {
		code := k.Code()
		if code == "" {
			t.Errorf("reason %d has no code", k)
			continue
		}
		if other, dup := seen[code]; dup {
			t.Errorf("reasons %d and %d share the code %q", other, k, code)
		}
		seen[code] = k
		if back, ok := rules.ReasonKindOf(code); !ok || back != k {
			t.Errorf("code %q names %d back, want %d", code, back, k)
		}
	}
	if _, ok := rules.ReasonKindOf("aNewerBuildsReason"); ok {
		t.Error("an unknown code named a reason")
	}
	if _, ok := rules.ReasonKindOf(""); ok {
		t.Error("the empty code named a reason")
	}
}
