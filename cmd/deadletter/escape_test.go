package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// Every --json output escapes what a terminal printing it must not meet — C0 and C1 controls, DEL, bidirectional
// overrides, line separators — as \uXXXX, and keeps a lone surrogate as \udXXX; a script decodes the same text.
func TestJSONOutputEscapesUntrustedText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Create(dir)
	name := "ODD/2026/11/30/1/del\x7f-c1\u009b31m-rtl\u202egnp.json-ls\u2028.json"
	body := `[{"id":"lone-\ud800|1","subject":"\u009b2J \u202e \u007f","eventType":"T","dataVersion":"1","data":{},"deadLetterReason":"R\u202e"}]`
	if _, err := d.Write(context.Background(), name, []byte(body), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Backdate(context.Background(), name, time.Now().Add(-2*time.Hour))
	// A subscription (the first segment, a map key in report's timeline) and a quarantine copy as hostile.
	sub := "SU\u0085B\u202e\u2066/2026/11/30/1/x.json"
	d.Write(context.Background(), sub, []byte(body), store.WriteOptions{})
	d.Backdate(context.Background(), sub, time.Now().Add(-2*time.Hour))
	q := "quarantine/Q\u009b/2026/11/30/1/\u202eq.json"
	d.Write(context.Background(), q, []byte(body), store.WriteOptions{})
	raw := []string{"\x7f", "\u009b", "\u0085", "\u202e", "\u2066", "\u2028", "\x1b"}
	watch := func() (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		run(ctx, []string{"watch", "--json", "--interval", "1h", "--dir", dir}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
		return out.String(), errb.String()
	}
	for _, args := range [][]string{{"ls", "--json"}, {"ls", "--jsonl"}, {"show", name, "--json"}, {"check", "--json"},
		{"drain", name, "--json", "--yes", "--dry-run"}, {"drain", "--json", "--yes", "--dry-run"}, {"report", "--format", "json"},
		{"restore", q, "--json", "--yes", "--dry-run", "--force"}, {"ack", name, "--json", "--yes"}, {"watch"}} {
		var out, errs string
		if args[0] == "watch" {
			out, errs = watch()
		} else {
			out, errs, _ = runCmd(t, append(args, "--dir", dir)...)
		}
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

// The Markdown report never lets blob-derived text become markup: no link, image or autolink out of a
// subscription named like one, no table cell split by a reason holding \|, nothing a terminal acts on.
func TestReportMarkdownIsInert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Create(dir)
	for _, sub := range []string{"[click me](https:||evil.example)", "![beacon](https:||evil.example|p.png)", "www.evil.example", "ops@evil.example", "<img src=x>", "**bold**"} {
		name := strings.ReplaceAll(sub, "|", "%2F") + "/2026/11/30/1/x.json"
		body := `[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{},"deadLetterReason":"a\\|b | c [x](https://evil.example) \u0085","lastDeliveryOutcome":"![i](https://evil.example/i.png)"}]`
		if _, err := d.Write(context.Background(), name, []byte(body), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		d.Backdate(context.Background(), name, time.Now().Add(-2*time.Hour))
	}
	out, _, _ := runCmd(t, "report", "--dir", dir)
	if title, _, _ := strings.Cut(out, "\n"); !strings.Contains(title, "dir:/") {
		t.Errorf("the report's title escapes what is no link: %q", title)
	}
	if strings.Contains(out, "\u0085") {
		t.Error("a raw C1 control in the report")
	}
	fenced := false
	spans := regexp.MustCompile("`[^`]*`")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			if strings.Contains(line, "```") {
				t.Errorf("blob text ends the code block: %s", line)
			}
			continue // nothing is markup inside a fenced block
		}
		plain := spans.ReplaceAllString(line, "") // nor inside a code span
		for _, bad := range []string{"](", "https://", "www.evil", "<img", "**bold**", "@evil"} {
			if i := strings.Index(plain, bad); i >= 0 && (i == 0 || plain[i-1] != '\\') {
				t.Errorf("the report holds %q unescaped: %s", bad, line)
			}
		}
	}
	// Every row of the reasons table has its five cells: an escaped pipe does not split one.
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| subscription | events | deadLetterReason") {
			inTable = true
			continue
		}
		if inTable && strings.HasPrefix(line, "|") {
			cells := 0
			for i := 0; i < len(line); i++ {
				if line[i] == '\\' {
					i++
					continue
				}
				if line[i] == '|' {
					cells++
				}
			}
			if cells != 6 {
				t.Errorf("a row with %d unescaped pipes (want 6): %s", cells, line)
			}
		} else if inTable {
			break
		}
	}
}
