package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
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

// detail is the blob view: properties, the prediction, every event with its verdicts, and the raw JSON,
// pretty-printed, in one scrollable viewport.
type detail struct {
	name  string
	d     *replay.Detail
	err   error
	lines []string
	vp    viewport.Model
}

func newDetail(name string) *detail {
	return &detail{name: name, vp: viewport.New(0, 0)}
}

// SetSize implements the component contract.
func (v *detail) SetSize(w, h int) {
	if v.vp.Width != w {
		v.vp.Width = w
		v.wrap()
	}
	v.vp.Height = max(1, h)
}

// wrap lays the content out at the viewport's width: nothing is cut, long lines continue below.
func (v *detail) wrap() {
	if v.vp.Width <= 0 {
		return
	}
	out := make([]string, 0, len(v.lines))
	for _, l := range v.lines {
		out = append(out, ansi.Wrap(l, v.vp.Width, " "))
	}
	y := v.vp.YOffset
	v.vp.SetContent(strings.Join(out, "\n"))
	v.vp.SetYOffset(y)
}

// Update scrolls.
func (v *detail) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

// Load fills the view from an inspected blob.
func (v *detail) Load(d *replay.Detail, err error, cfg replay.Config, st Styles) {
	v.d, v.err = d, err
	v.lines = detailLines(v.name, d, err, cfg, st)
	v.vp.YOffset = 0
	v.wrap()
}

func detailLines(name string, d *replay.Detail, err error, cfg replay.Config, st Styles) []string {
	p := textfmt.Printable
	lines := []string{st.Title.Render(p(name))}
	if err != nil {
		return append(lines, "", st.Error.Render("could not read the blob: "+p(err.Error())))
	}
	if d == nil {
		return append(lines, "", st.Dim.Render("reading…"))
	}
	section := func(s string) { lines = append(lines, "", st.Header.Render("── "+s+" "+strings.Repeat("─", 40))) }
	lines = append(lines,
		fmt.Sprintf("pane %s · age %s · TTL %s · deleted by the lifecycle rule in %s (%s)", d.Pane, textfmt.Duration(d.Age), cfg.TTL,
			textfmt.Duration(d.ExpiresAt.Sub(d.LastModified.Add(d.Age))), d.ExpiresAt.UTC().Format("2006-01-02 15:04Z")),
		fmt.Sprintf("size %d B · modified %s · etag %s · %s", d.Size, d.LastModified.UTC().Format("2006-01-02 15:04:05Z"), p(d.ETag), p(d.ContentType)))
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
	if d.ReadErr != "" {
		return append(lines, "", st.Error.Render("NOT READ: "+p(d.ReadErr)))
	}
	if d.Payload.Malformed() {
		lines = append(lines, "", st.Error.Render("MALFORMED: "+p(d.Payload.Err.Error())),
			st.Dim.Render("the replay quarantines the whole payload; the events below are a best-effort reading"))
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
		attempt := ""
		if i < len(d.Judgements) {
			attempt = fmt.Sprintf("attempt %s", d.Judgements[i].Attempt)
			if d.Judgements[i].Uncountable {
				attempt = "attempt 0 · UNCOUNTABLE (id holds a line terminator: the cap never stops it)"
			}
		}
		verdict := present.EventVerdictLabel(d, i)
		vs := st.OK
		if verdict != string(replay.VerdictReplay) {
			vs = st.Warn
		}
		lines = append(lines, fmt.Sprintf("#%d %s · %s → %s", ev.Index, p(ev.ID), attempt, vs.Render(verdict)),
			fmt.Sprintf("   type %s · subject %s", p(ev.EventType), p(ev.Subject)),
			fmt.Sprintf("   %s · %s%s · attempts %s · published %s · last try %s", p(ev.DeadLetterReason), p(ev.LastDeliveryOutcome),
				httpCode(ev.LastHTTPStatusCode), num(ev.DeliveryAttempts), p(ev.PublishTime), p(ev.LastDeliveryAttemptTime)))
	}
	section("raw JSON")
	body := d.Body
	if len(body) > maxRawBytes {
		body = body[:maxRawBytes]
		lines = append(lines, st.Dim.Render(fmt.Sprintf("(first %d of %d bytes)", maxRawBytes, len(d.Body))))
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

func num(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// View renders the viewport (exactly its size).
func (v *detail) View() string { return v.vp.View() }
