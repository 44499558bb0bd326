package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// The filter: words are ANDed; a plain word matches what the row shows (the blob's name — subscription, hour,
// GUID — and its dominant reason and outcome); field:value terms match the field named.
const filterSyntax = "words are ANDed · sub:NAME reason:TEXT outcome:TEXT hour:MM-DDTHH verdict:cap|replay|notIdempotent|unroutable|unknown|malformed|crash|handled · " +
	"is:malformed is:crash is:expiring is:stalled is:handled is:acked is:unread is:unreadable"

// filterBar is the filter's text field, the query it holds, and the per-blob search keys.
type filterBar struct {
	input   textinput.Model
	text    string // the applied query
	seq     int
	err     string
	matcher matcher
}

type filterMsg struct{ seq int }

func newFilterBar() filterBar {
	in := newInput()
	in.Prompt = "/"
	in.Placeholder = "words, sub:, reason:, outcome:, verdict:, is:  (? for the syntax)"
	in.CharLimit = 200
	return filterBar{input: in}
}

func (f *filterBar) focused() bool { return f.input.Focused() }

// passthrough gives the text field what is not a key (the cursor's blink).
func (f *filterBar) passthrough(msg tea.Msg) tea.Cmd {
	if !f.input.Focused() {
		return nil
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	return cmd
}

// newInput is a text field whose cursor does not blink: a blink is a redraw twice a second, and at a million
// rows every redraw counts.
func newInput() textinput.Model {
	in := textinput.New()
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// typed hands a key to the text field and schedules the filter, debounced: a burst of keys filters once.
func (f *filterBar) typed(m *Model, k tea.KeyMsg) tea.Cmd {
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(k)
	if f.input.Value() == before {
		return cmd
	}
	f.seq++
	seq := f.seq
	return tea.Batch(cmd, m.opt.After(80*time.Millisecond, filterMsg{seq: seq}))
}

// term is one word of a query.
type term struct {
	field, value string
}

// words splits a query at spaces, keeping "quoted text" (a reason with spaces) together.
func words(q string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
		case (r == ' ' || r == '\t') && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func parseQuery(q string) ([]term, error) {
	var out []term
	for _, w := range words(q) {
		f, v, ok := strings.Cut(w, ":")
		if !ok {
			out = append(out, term{value: strings.ToLower(w)})
			continue
		}
		if v == "" {
			return nil, fmt.Errorf("%s needs a value after the colon (sub:PUSH, is:expiring)", w)
		}
		switch f = strings.ToLower(f); f {
		case "sub", "subscription":
			f = "sub"
		case "reason", "outcome", "name", "hour":
		case "verdict":
			if !replay.IsVerdictFilter(v) { // the words ls --verdict takes
				return nil, fmt.Errorf("verdict:%s — want %s", v, replay.VerdictFilterWords)
			}
		case "is":
			if !slices.Contains(replay.IsWords, strings.ToLower(v)) {
				return nil, fmt.Errorf("is:%s — want %s", v, strings.Join(replay.IsWords, ", "))
			}
		default:
			return nil, fmt.Errorf("%s: is not a filter field (sub, reason, outcome, hour, verdict, is)", f)
		}
		out = append(out, term{field: f, value: strings.ToLower(v)})
	}
	return out, nil
}

// match returns the filter for the applied query (nil: no filter). A query that does not parse matches nothing:
// a typo must never widen what the screen shows, and what an action takes, to everything.
func (f *filterBar) match(snap *replay.Snapshot, cfg replay.Config) rowFilter {
	terms, err := parseQuery(f.text)
	f.err = ""
	if err != nil {
		f.err = textfmt.Printable(err.Error()) // it quotes what was typed (or pasted)
		return func(int) bool { return false }
	}
	if len(terms) == 0 {
		return nil
	}
	mt := &f.matcher
	if mt.snap != snap || len(mt.keys) != len(snap.Items) {
		mt.reset(snap)
	}
	return func(i int) bool {
		it := &snap.Items[i]
		for _, t := range terms {
			if !termMatches(cfg, snap.Now, mt, i, it, t) {
				return false
			}
		}
		return true
	}
}

func termMatches(cfg replay.Config, now time.Time, mt *matcher, i int, it *replay.Item, t term) bool {
	s := it.Summary
	switch t.field {
	case "":
		return strings.Contains(mt.key(i), t.value)
	case "name":
		return strings.Contains(strings.ToLower(it.Name), t.value)
	case "sub":
		return strings.Contains(strings.ToLower(it.Parsed.Subscription), t.value)
	case "hour":
		return !it.Parsed.Hour.IsZero() && strings.HasPrefix(strings.ToLower(it.Parsed.Hour.Format("01-02T15")), t.value)
	case "reason", "outcome":
		if s == nil {
			return false
		}
		cs := s.Reasons
		if t.field == "outcome" {
			cs = s.Outcomes
		}
		for _, c := range cs {
			if strings.Contains(strings.ToLower(c.Value), t.value) {
				return true
			}
		}
		return false
	}
	match, _ := cfg.Is(it, now, t.value) // verdict: and is: (parseQuery let only known words through)
	return match
}

// matcher holds each blob's lower-cased search key — what its row shows — built once, again when its summary
// arrives, so a filter pass over a million blobs is one substring search each.
type matcher struct {
	snap    *replay.Snapshot
	keys    []string
	summary []*replay.Summary
}

func (mt *matcher) reset(s *replay.Snapshot) {
	*mt = matcher{snap: s, keys: make([]string, len(s.Items)), summary: make([]*replay.Summary, len(s.Items))}
}

func (mt *matcher) key(i int) string {
	it := &mt.snap.Items[i]
	if mt.keys[i] == "" || mt.summary[i] != it.Summary {
		var b strings.Builder
		b.WriteString(it.Name)
		if s := it.Summary; s != nil {
			b.WriteByte(0)
			b.WriteString(s.Reasons.Top())
			b.WriteByte(0)
			b.WriteString(s.Outcomes.Top())
		}
		mt.keys[i], mt.summary[i] = strings.ToLower(b.String()), it.Summary
	}
	return mt.keys[i]
}

// rowFilter is the applied query over the snapshot (nil: no filter).
func (m *Model) rowFilter() rowFilter { return m.filter.match(m.snap, m.cfg) }

// applyFilter applies the text field's query to every table as it is typed. Once the filter is set (enter, esc),
// selections it hides are dropped — an action never takes a blob the operator cannot see — and the status line
// says how many.
func (m *Model) applyFilter() {
	m.filter.text = m.filter.input.Value()
	match := m.rowFilter()
	for _, t := range m.tables {
		t.refilter(match, t.cursorName())
	}
	if m.filter.focused() {
		return
	}
	dropped := 0
	for _, t := range m.tables {
		dropped += t.dropHidden()
	}
	if dropped > 0 {
		m.setStatus(fmt.Sprintf("%d selected blob(s) hidden by the filter were unselected", dropped))
	}
}
