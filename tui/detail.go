package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// Limits that keep opening a hostile blob instant: the rest is summarized, never rendered.
const (
	maxDetailEvents = 2000
	maxRawBytes     = 1 << 20
)

// detail is the blob view: properties, what makes it urgent, the prediction, every event with its verdicts, and
// the raw JSON, pretty-printed — one scrollable text with a position and a search.
type detail struct {
	name   string
	d      *replay.Detail
	err    error
	source []string // the lines before wrapping (already printable and styled)
	lines  []string // wrapped to the width
	srcOf  []int    // the source line each wrapped line comes from
	plain  []string // lines without styles, lower-cased, for the search
	offset int
	w, h   int

	search  textinput.Model
	query   string
	matches []int // line indexes holding the query
	match   int   // the current one

	st  Styles
	cfg replay.Config // the rules its prediction is explained by
}

type detailMsg struct {
	seq int
	d   *replay.Detail
	err error
}

func newDetail(name string, st Styles, cfg replay.Config) *detail {
	in := newInput()
	in.Prompt = "search: "
	in.CharLimit = 200
	return &detail{name: name, search: in, st: st, cfg: cfg}
}

// openDetail shows a blob and reads it in a command.
func (m *Model) openDetail(name string) tea.Cmd {
	m.detail = newDetail(name, m.st, m.cfg)
	m.layout()
	m.detail.load(nil, nil)
	m.detailSeq++
	seq, l, ctx := m.detailSeq, m.opt.Loader, m.ctx
	return func() tea.Msg {
		d, err := l.Inspect(ctx, name)
		return detailMsg{seq: seq, d: d, err: err}
	}
}

// SetSize implements the component contract: the text's width and the lines it may show (below its top bar).
// A new width re-wraps the text and keeps the view on what it showed: the same top line and the current match.
func (v *detail) SetSize(w, h int) {
	v.h = max(1, h-1)
	if v.w != w {
		top, match := v.sourceAt(v.offset), -1
		if len(v.matches) > 0 {
			match = v.sourceAt(v.matches[v.match])
		}
		v.w = w
		v.wrap()
		v.offset = max(0, slices.Index(v.srcOf, top))
		if i := slices.IndexFunc(v.matches, func(l int) bool { return v.srcOf[l] == match }); i >= 0 {
			v.match = i
			if l := v.matches[i]; l < v.offset || l >= v.offset+v.h {
				v.offset = l
			}
		}
	}
	v.clamp()
}

// sourceAt is the source line of wrapped line i (-1 when there is none).
func (v *detail) sourceAt(i int) int {
	if i < 0 || i >= len(v.srcOf) {
		return -1
	}
	return v.srcOf[i]
}

// load shows what the read returned: the blob (nil while it is read) or why it could not be read.
func (v *detail) load(d *replay.Detail, err error) {
	v.d, v.err = d, err
	v.source = detailLines(v.name, d, err, v.st, v.cfg)
	v.offset = 0
	v.wrap()
	v.find()
}

// wrap lays the content out at the width: nothing is cut, long lines continue below.
func (v *detail) wrap() {
	if v.w <= 0 {
		return
	}
	v.lines, v.srcOf = v.lines[:0], v.srcOf[:0]
	for i, l := range v.source {
		for _, w := range strings.Split(ansi.Wrap(l, v.w, " "), "\n") {
			v.lines, v.srcOf = append(v.lines, w), append(v.srcOf, i)
		}
	}
	v.plain = make([]string, len(v.lines))
	for i, l := range v.lines {
		v.plain[i] = strings.ToLower(ansi.Strip(l))
	}
	v.find()
}

func (v *detail) clamp() {
	v.offset = max(0, min(v.offset, len(v.lines)-v.h))
}

func (v *detail) scroll(n int) { v.offset += n; v.clamp() }

// find recomputes the matches of the query and keeps the current one in view.
func (v *detail) find() {
	v.matches = v.matches[:0]
	if v.query == "" {
		return
	}
	q := strings.ToLower(v.query)
	for i, l := range v.plain {
		if strings.Contains(l, q) {
			v.matches = append(v.matches, i)
		}
	}
	v.match = min(v.match, max(len(v.matches)-1, 0))
}

// next moves to the next (dir 1) or previous (-1) match after the top line.
func (v *detail) next(dir int) {
	if len(v.matches) == 0 {
		return
	}
	if dir > 0 {
		i := sort.SearchInts(v.matches, v.offset+1)
		v.match = i % len(v.matches)
	} else {
		i := sort.SearchInts(v.matches, v.offset) - 1
		v.match = (i + len(v.matches)) % len(v.matches)
	}
	v.offset = v.matches[v.match]
	v.clamp()
}

// position says where the view is: lines shown, of how many, and the search.
func (v *detail) position() string {
	if len(v.lines) == 0 {
		return ""
	}
	last := min(len(v.lines), v.offset+v.h)
	s := fmt.Sprintf("lines %d–%d of %d", v.offset+1, last, len(v.lines))
	if len(v.lines) > v.h {
		s += fmt.Sprintf(" (%d%%)", 100*last/len(v.lines))
	}
	if v.query != "" {
		if len(v.matches) == 0 {
			s += fmt.Sprintf(" · %q not found", v.query)
		} else {
			s += fmt.Sprintf(" · match %d of %d for %q", v.match+1, len(v.matches), v.query)
		}
	}
	return s
}

// View renders exactly the detail's size: its top bar (the keys that matter here and the position) and the text.
func (v *detail) View() string {
	// Where the view is comes first: at 80 columns the keys (also in the footer) are what gets cut.
	bar := v.position() + "  " + v.st.Dim.Render("esc back · ↑↓ pgup pgdn g G scroll · / search · n N next")
	if v.search.Focused() {
		bar = v.search.View()
	}
	var b strings.Builder
	b.WriteString(fit(bar, v.w, 1))
	end := min(len(v.lines), v.offset+v.h)
	cur := -1
	if len(v.matches) > 0 {
		cur = v.matches[v.match]
	}
	for i := v.offset; i < end; i++ {
		l := v.lines[i]
		if i == cur {
			l = v.st.Match.Render(ansi.Strip(l))
		}
		b.WriteString("\n" + fit(l, v.w, 1))
	}
	return fit(b.String(), v.w, v.h+1)
}

func detailLines(name string, d *replay.Detail, err error, st Styles, cfg replay.Config) []string {
	p := textfmt.Printable
	lines := []string{st.Title.Render(p(name))}
	if err != nil {
		return append(lines, "", st.Error.Render("could not read the blob: "+p(err.Error())))
	}
	if d == nil {
		return append(lines, "", st.Dim.Render("reading…"))
	}
	now := d.Now
	al := cfg.AlertsOf(&d.Item, now)
	section := func(s string) { lines = append(lines, "", st.Header.Render("── "+s+" "+strings.Repeat("─", 40))) }
	lines = append(lines,
		fmt.Sprintf("pane %s · age %s · TTL %s · deleted by the lifecycle rule in %s (%s)", d.Pane, textfmt.Duration(d.Age), textfmt.Duration(cfg.TTL),
			textfmt.Duration(al.DeletesIn), al.ExpiresAt.UTC().Format("2006-01-02 15:04Z")),
		fmt.Sprintf("size %s · modified %s · etag %s · %s", textfmt.Bytes(d.Size), d.LastModified.UTC().Format("2006-01-02 15:04:05Z"), p(d.ETag), p(d.ContentType)))
	if len(d.Metadata) > 0 {
		keys := make([]string, 0, len(d.Metadata))
		for k := range d.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, p(k)+"="+p(d.Metadata[k]))
		}
		lines = append(lines, "metadata "+strings.Join(kv, " · "))
	}
	for _, l := range present.StateLines(al) {
		lines = append(lines, st.Warn.Render(l))
	}
	if d.ReadErr != "" {
		return append(lines, "", st.Error.Render("NOT READ: "+p(d.ReadErr)))
	}
	if d.Payload.Malformed() {
		lines = append(lines, "", st.Error.Render("MALFORMED: "+p(d.Payload.Err.Error())),
			st.Dim.Render(present.BestEffortNote))
	}
	section("what the estate will do")
	for _, l := range present.Explain(d, cfg) {
		lines = append(lines, p(l))
	}
	section(fmt.Sprintf("events (%d)", len(d.Payload.Events)))
	for i, ev := range d.Payload.Events {
		if i == maxDetailEvents {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("… %d more events (see `deadletter show --json`)", len(d.Payload.Events)-i)))
			break
		}
		attempt, uncountable := present.EventAttempt(d, i)
		if attempt != "" {
			attempt = "attempt " + attempt
		}
		if uncountable {
			attempt += " · UNCOUNTABLE (id holds a line terminator: the cap never stops it)"
		}
		verdict := present.EventVerdictLabel(d, i)
		vs := st.OK
		if verdict != replay.VerdictReplay.String() {
			vs = st.Warn
		}
		lines = append(lines, fmt.Sprintf("#%d %s · %s → %s", ev.Index, p(ev.ID), attempt, vs.Render(verdict)),
			fmt.Sprintf("   type %s · subject %s", p(ev.EventType), p(ev.Subject)),
			fmt.Sprintf("   %s · %s%s · attempts %s · published %s · last try %s", p(ev.DeadLetterReason), p(ev.LastDeliveryOutcome),
				httpCode(ev.LastHTTPStatusCode), present.Number(ev.DeliveryAttempts), p(ev.PublishTime), p(ev.LastDeliveryAttemptTime)))
	}
	section("raw JSON")
	body := d.Body
	if len(body) > maxRawBytes {
		body = body[:maxRawBytes]
		lines = append(lines, st.Dim.Render(fmt.Sprintf("(first %s of %s)", textfmt.Bytes(maxRawBytes), textfmt.Bytes(int64(len(d.Body))))))
	}
	for _, l := range strings.Split(present.PrettyJSON(body), "\n") {
		lines = append(lines, p(l))
	}
	return lines
}

func httpCode(n *int64) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf(" (HTTP %d)", *n)
}
