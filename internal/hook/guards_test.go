package hook

import (
	"slices"
	"testing"
)

// Each of the two guards holds alone (they stand behind each other, so a test through both cannot tell one
// broken): Allow never passes a credential's variable, even named by --exec-env; Scrub drops a credential's name,
// a variable holding a secret deadletter knows (or a part of one), and one whose value looks like a key or SAS,
// whatever it is called — and keeps what the operator meant to pass.
func TestEachGuardKeepsCredentialsFromAHookAlone(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "AZURE_CLIENT_SECRET=s3cret-value-xyz", "TEAM_CHANNEL=#oncall",
		"MY_TOKEN=prefix-AccountKeyPart0123456789-suffix", "LOOKS_LIKE=DefaultEndpointsProtocol=https;AccountKey=abc"}
	allowed := Allow(env, []string{"AZURE_CLIENT_SECRET", "TEAM_CHANNEL"})
	if slices.Contains(allowed, "AZURE_CLIENT_SECRET=s3cret-value-xyz") || !slices.Contains(allowed, "TEAM_CHANNEL=#oncall") {
		t.Fatalf("Allow: %v", allowed)
	}
	scrubbed := Scrub(env, []string{"AccountKeyPart0123456789"})
	for _, kv := range []string{"AZURE_CLIENT_SECRET=s3cret-value-xyz", "MY_TOKEN=prefix-AccountKeyPart0123456789-suffix", "LOOKS_LIKE=DefaultEndpointsProtocol=https;AccountKey=abc"} {
		if slices.Contains(scrubbed, kv) {
			t.Errorf("Scrub kept %s", kv)
		}
	}
	if !slices.Contains(scrubbed, "TEAM_CHANNEL=#oncall") || !slices.Contains(scrubbed, "PATH=/bin") {
		t.Fatalf("Scrub dropped what may pass: %v", scrubbed)
	}
}
