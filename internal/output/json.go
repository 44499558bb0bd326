package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

func OptTime(t *time.Time) OptText {
	if t == nil || t.IsZero() {
		return ""
	}
	return OptText(RFC3339(*t))
}

// text is untrusted text in JSON: escaped so that no control character, C1 control, DEL, bidirectional override
// or line separator reaches a terminal that prints the JSON, and a lone surrogate the estate keeps is \udXXX.
type Text string

func (t Text) MarshalJSON() ([]byte, error) { return textfmt.AppendJSON(nil, string(t)), nil }

// optText is text that is null when empty.
type OptText string

func (t OptText) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return textfmt.AppendJSON(nil, string(t)), nil
}

// counts is a multiset of untrusted values as a JSON object (its keys escaped like text).
type Counts rules.Counts

func (c Counts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, x := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = textfmt.AppendJSON(b, x.Value)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(x.N), 10)
	}
	return append(b, '}'), nil
}

// verdictCounts is a verdict count as {"replay": 3, "cap": 1}, non-zero counts only.
type VerdictCounts rules.VerdictCounts

func (vc VerdictCounts) MarshalJSON() ([]byte, error) {
	m := map[string]int{}
	for _, v := range rules.AllVerdicts {
		if n := rules.VerdictCounts(vc).Of(v); n > 0 {
			m[v.String()] = n
		}
	}
	return json.Marshal(m)
}

// attempt is a replay attempt as the estate sees it: a JSON number (1e+21 past the integers), null for Infinity.
type Attempt rules.Attempt

func (a Attempt) MarshalJSON() ([]byte, error) {
	if !rules.Attempt(a).Finite() {
		return []byte("null"), nil
	}
	return []byte(rules.Attempt(a).String()), nil
}

func VerdictNames(vs rules.VerdictSet) []string {
	out := []string{}
	for _, v := range vs.List() {
		out = append(out, v.String())
	}
	return out
}

func RFC3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// writeJSON writes v indented, HTML left alone (blob names hold & and <), one document per call.
func WriteJSON(w io.Writer, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	json.Indent(&out, b, "", "  ")
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// writeJSONLine writes v on one line (ls --jsonl, watch --json).
func WriteJSONLine(w io.Writer, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// marshal is the one way a JSON document leaves deadletter: encoded, then every string in it made safe for a
// terminal (textfmt.SafeJSON) — map keys and any field a type forgot included.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return textfmt.SafeJSON(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// BlobList writes ls's document as its blobs arrive — {"container", "now", "rehearsal"?, "blobs": [...]} — or,
// as JSON lines, one blob a line: a million blobs are never held to be written.
type BlobList struct {
	w                io.Writer
	lines            bool
	container        string
	rehearsal, begun bool
}

// NewBlobList starts the list of container's blobs on w, as one document or (lines) one blob a line.
func NewBlobList(w io.Writer, container string, rehearsal, lines bool) *BlobList {
	return &BlobList{w: w, container: container, rehearsal: rehearsal, lines: lines}
}

// Add writes one blob, listed at now (the document's now is the first page's).
func (l *BlobList) Add(b BlobJSON, now time.Time) error {
	if l.lines {
		return WriteJSONLine(l.w, b)
	}
	sep := ",\n"
	if !l.begun {
		l.begin(now, "\n")
		sep = ""
	}
	line, err := Marshal(b)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(l.w, "%s%s", sep, line)
	return err
}

func (l *BlobList) begin(now time.Time, after string) {
	l.begun = true
	fmt.Fprintf(l.w, "{\"container\": %s, \"now\": %q, ", textfmt.AppendJSON(nil, l.container), RFC3339(now))
	if l.rehearsal {
		io.WriteString(l.w, `"rehearsal": true, `)
	}
	io.WriteString(l.w, "\"blobs\": ["+after)
}

// Close ends the document (now: the listing's service time, for a document that got no blob).
func (l *BlobList) Close(now time.Time) error {
	if l.lines {
		return nil
	}
	if !l.begun {
		l.begin(now, "")
	}
	_, err := io.WriteString(l.w, "\n]}\n")
	return err
}
