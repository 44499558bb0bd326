package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// Every --json output escapes what a terminal printing it must not meet — C0 and C1 controls, DEL, bidirectional
// overrides, line separators — as \uXXXX, and keeps a lone surrogate as \udXXX; a script decodes the same text.
func TestJSONOutputEscapesUntrustedText(t *testing.T) {
	dir := t.TempDir()
	d, _ := dirstore.Create(dir)
	name := "ODD/2026/11/30/1/del\x7f-c1\u009b31m-rtl\u202egnp.json-ls\u2028.json"
	body := `[{"id":"lone-\ud800|1","subject":"\u009b2J \u202e \u007f","eventType":"T","dataVersion":"1","data":{},"deadLetterReason":"R\u202e"}]`
	if _, err := d.Write(context.Background(), name, []byte(body), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Backdate(context.Background(), name, time.Now().Add(-2*time.Hour))
	raw := []string{"\x7f", "\u009b", "\u202e", "\u2028", "\x1b"}
	for _, args := range [][]string{{"ls", "--json"}, {"ls", "--jsonl"}, {"show", name, "--json"}, {"check", "--json"},
		{"drain", name, "--json", "--yes", "--dry-run"}, {"report", "--format", "json"}} {
		out, errs, _ := runCmd(t, append(args, "--dir", dir)...)
		for _, r := range raw {
			if strings.Contains(out, r) || strings.Contains(errs, r) {
				t.Errorf("%v printed %q raw:\n%s", args, r, out)
			}
		}
		if !strings.Contains(out, `\u009b`) || !strings.Contains(out, `\u202e`) {
			t.Errorf("%v: the escapes are missing:\n%s", args, out)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(out)))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
			}
		}
	}
	// The name decodes back to itself; the lone surrogate stays one in show --json (\ud800, not \ufffd).
	var s map[string]any
	out, _, _ := runCmd(t, "show", name, "--dir", dir, "--json")
	json.Unmarshal([]byte(out), &s)
	if s["name"] != name || !strings.Contains(out, `"lone-\ud800|1"`) {
		t.Fatalf("name %q, output:\n%s", s["name"], out)
	}
}
