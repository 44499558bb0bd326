package output

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// md makes untrusted text inert in Markdown (GitHub's flavour): printable, and every character that could start
// markup there backslash-escaped — so nothing in it opens a link, an image, emphasis, strikethrough, a code span,
// an HTML tag or an entity, or ends a table cell — and the autolink triggers broken (https\://, www\., @), so no
// blob-derived text becomes a link. Dashes, dots, slashes and digits stay as they are: names stay readable.
func Md(s string) string {
	s = textfmt.Printable(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		// ( ) and ! need no escape: with [ and ] escaped no link or image can open; @ only where an e-mail
		// autolink could form (a dot in what follows it), so root@vm reads as itself.
		case strings.IndexByte("\\`*_[]|<>~&", c) >= 0,
			c == '@' && emailDomain(s[i+1:]),
			c == ':' && strings.HasPrefix(s[i+1:], "//"), // a URL's scheme (http://…); dir:/tmp is no link
			c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// emailDomain says whether what follows an @ could be an autolinked e-mail's domain: a dot before the next space.
func emailDomain(rest string) bool {
	end := strings.IndexAny(rest, " \t")
	if end < 0 {
		end = len(rest)
	}
	return strings.Contains(rest[:end], ".")
}

// mdSpan is untrusted text as a Markdown code span, exactly as it is (made printable): CommonMark's rule — a
// delimiter of one backtick more than the longest run inside, padded with a space where the text begins or ends
// with one — so a backtick in a name is shown as itself and cannot end the span early.
func MdSpan(s string) string {
	p := textfmt.Printable(s)
	longest, run := 0, 0
	for _, c := range p {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(p, "`") || strings.HasSuffix(p, "`") {
		p = " " + p + " "
	}
	return fence + p + fence
}

// writeMarkdown writes the report for a postmortem: a section per fact.
func WriteMarkdown(w io.Writer, r ReportJSON) {
	mdSummary(w, r)
	mdTimeline(w, r)
	mdReasons(w, r)
	mdFates(w, r)
	mdLoss(w, r)
	mdFindings(w, r)
	mdActions(w, r)
}

func mdSummary(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "# Dead-letter incident report: %s\n\n", Md(string(r.Container)))
	if r.Rehearsal {
		fmt.Fprint(w, "**REHEARSAL** — this container is a twin and its service time the twin's clock: a rehearsal, not an incident.\n\n")
	}
	fmt.Fprintf(w, "Service time %s · timeline since %s (%dh)\n\n## Summary\n\n", r.Now, r.Since, r.WindowHours)
	var panes []string
	for _, pn := range rules.Panes {
		panes = append(panes, fmt.Sprintf("%s %d", pn, r.Counts[pn]))
	}
	fmt.Fprintf(w, "- %d blobs (%s), %d events read", r.Blobs, strings.Join(panes, ", "), r.Events)
	if r.Handled > 0 {
		fmt.Fprintf(w, "; %d blob(s) the replay already handled (their copies count their events)", r.Handled)
	}
	if r.Unread > 0 {
		fmt.Fprintf(w, "; %d blobs not read", r.Unread)
	}
	fmt.Fprintln(w)
	if r.Unreadable > 0 {
		fmt.Fprintf(w, "- **%d blob(s) could not be read** (refused, failed or over the size limit), so this report is incomplete: %s\n", r.Unreadable, Md(string(r.FirstUnreadable)))
	}
	switch {
	case r.BurstStart != nil && *r.BurstStart == r.Since:
		fmt.Fprintf(w, "- The current burst of dead letters was already under way when the timeline starts (%s): widen --since to see its start.\n", *r.BurstStart)
	case r.BurstStart != nil:
		fmt.Fprintf(w, "- The current burst of dead letters started at %s.\n", *r.BurstStart)
	}
	if r.Healthy {
		fmt.Fprintf(w, "- Healthy: nothing stranded, quarantined, expiring, stalled, crashing or malformed.\n")
		return
	}
	if len(r.Findings) == 0 {
		return
	}
	var kinds []string
	for _, f := range r.Findings {
		kinds = append(kinds, fmt.Sprintf("%s %d", f.Kind, f.Count))
	}
	fmt.Fprintf(w, "- %d finding(s): %s.\n", len(r.Findings), strings.Join(kinds, ", "))
	if a := r.AppStart; a.Takes > 0 {
		l := present.AppStartLine(rules.AppStartCounts{Stranded: a.Stranded, Handled: a.Handled, HandledEvents: a.HandledEvents, Crash: a.Crash, Untriggerable: a.Untriggerable})
		fmt.Fprintf(w, "- %s\n", Md(l))
	}
}

// mdTimeline draws the hours that had dead letters as bars, quiet stretches folded into one line.
func mdTimeline(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "\n## Timeline: dead-lettered events per hour\n\n```text\n")
	first, last, peak := -1, -1, 1
	for i, h := range r.Timeline {
		if h.Events == 0 {
			continue
		}
		if first < 0 {
			first = i
		}
		last, peak = i, max(peak, h.Events)
	}
	if first < 0 {
		fmt.Fprintf(w, "(no dead letters in the window)\n")
	}
	quiet := 0
	for i := first; first >= 0 && i <= last; i++ {
		h := r.Timeline[i]
		burst := r.BurstStart != nil && *r.BurstStart == h.Hour
		if h.Events == 0 && !burst {
			quiet++
			continue
		}
		if quiet > 0 {
			fmt.Fprintf(w, "  %9s %s\n", "", quietHours(quiet))
			quiet = 0
		}
		mark := "  "
		if burst {
			mark = "▶ "
		}
		t, _ := time.Parse(time.RFC3339, h.Hour)
		fmt.Fprintf(w, "%s%s %-40s %6d  %s\n", mark, t.Format("01-02 15h"), strings.Repeat("█", (h.Events*40+peak-1)/peak), h.Events, bySubscription(h))
	}
	fmt.Fprintf(w, "```\n")
	if r.Before > 0 {
		fmt.Fprintf(w, "\n%d event(s) were dead-lettered before the window (or in blobs whose names carry no hour).\n", r.Before)
	}
}

func bySubscription(h HourJSON) string {
	subs := make([]string, 0, len(h.BySubscription))
	for s, n := range h.BySubscription {
		subs = append(subs, fmt.Sprintf("%s %d", textfmt.Printable(s), n)) // (in a fenced block, never at a line's start)
	}
	slices.Sort(subs)
	return strings.Join(subs, " · ")
}

func mdReasons(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "\n## Subscriptions and reasons\n\n| subscription | events | deadLetterReason | events | last delivery outcome |\n|---|---:|---|---:|---|\n")
	for _, s := range r.Subscriptions {
		if len(s.Reasons) == 0 {
			fmt.Fprintf(w, "| %s | %d | | | |\n", Md(string(s.Name)), s.Events)
		}
		for i, rs := range s.Reasons {
			name, events := "", ""
			if i == 0 {
				name, events = Md(string(s.Name)), fmt.Sprint(s.Events)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s |\n", name, events, Md(string(rs.Reason)), rs.Events, Md(string(rs.Outcome)))
		}
	}
}

func mdFates(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "\n## What the replay function will do with the waiting events\n\n| subscription |")
	for _, f := range rules.AllFates {
		fmt.Fprintf(w, " %s |", f)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---:|", len(rules.AllFates)))
	for _, s := range r.Subscriptions {
		fmt.Fprintf(w, "| %s |", Md(string(s.Name)))
		for _, f := range rules.AllFates {
			fmt.Fprintf(w, " %d |", s.Fates[f.String()])
		}
		fmt.Fprintln(w)
	}
}

func mdLoss(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "\n## Loss horizon: what the lifecycle rule deletes if nobody acts\n\n| within | blobs | events | not read |\n|---|---:|---:|---:|\n")
	for _, lo := range r.Loss {
		fmt.Fprintf(w, "| %dh | %d | %d | %d |\n", lo.WithinHours, lo.Blobs, lo.Events, lo.Unread)
	}
}

func mdFindings(w io.Writer, r ReportJSON) {
	fmt.Fprintf(w, "\n## Findings\n\n")
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "None.\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "- **%s** (%d): %s\n", f.Kind, f.Count, f.Message) // (deadletter's own words: no blob text in them)
		for _, n := range f.Names {
			fmt.Fprintf(w, "  - %s\n", MdSpan(string(n)))
		}
		if f.More > 0 {
			fmt.Fprintf(w, "  - … and %d more\n", f.More)
		}
	}
}

func mdActions(w io.Writer, r ReportJSON) {
	mdRecord(w, r.Record)
	fmt.Fprintf(w, "\n## Actions recorded in the container\n\n### Drains (blob metadata drainCount, drainedAt)\n\n")
	if len(r.Drains) == 0 {
		fmt.Fprintf(w, "None.\n")
	} else {
		fmt.Fprintf(w, "| blob | drainCount | drainedAt |\n|---|---:|---|\n")
		for _, d := range r.Drains {
			fmt.Fprintf(w, "| %s | %s | %s |\n", Md(string(d.Name)), Md(string(d.DrainCount)), Md(string(d.DrainedAt)))
		}
	}
	fmt.Fprintf(w, "\n### Restores (restored copies and the quarantine copy they came from)\n\n")
	if len(r.Restores) == 0 {
		fmt.Fprintf(w, "None.\n")
		return
	}
	fmt.Fprintf(w, "| restored copy | from |\n|---|---|\n")
	for _, x := range r.Restores {
		fmt.Fprintf(w, "| %s | %s |\n", Md(string(x.Name)), Md(string(x.From)))
	}
}

func quietHours(n int) string {
	if n == 1 {
		return "· 1 quiet hour"
	}
	return fmt.Sprintf("· %d quiet hours", n)
}

// mdRecord is the report's account of what was done, from the record: every action by whom and with what
// effect, then each kind's blobs with what became of them since.
func mdRecord(w io.Writer, rec *ReportRecordJSON) {
	if rec == nil {
		return
	}
	fmt.Fprintf(w, "\n## Actions (from the record)\n\n")
	if rec.Error != "" {
		fmt.Fprintf(w, "**The record could not be read**, so the actions taken are not known here: %s\n", Md(string(rec.Error)))
		return
	}
	if rec.LocalOnly {
		fmt.Fprintf(w, "The record is **local only** (%s): no audit container is configured, so only the actions taken from this machine are here.\n\n", Md(string(rec.Local)))
	} else {
		fmt.Fprintf(w, "The record is shared (%s), with this machine's log (%s).\n\n", Md(string(rec.Shared)), Md(string(rec.Local)))
	}
	if len(rec.Skipped) > 0 {
		fmt.Fprintf(w, "**%d line(s) of the record could not be read** and are skipped (the actions below are the rest):\n\n", len(rec.Skipped))
		for _, l := range rec.Skipped {
			fmt.Fprintf(w, "- %s\n", Md(string(l)))
		}
		fmt.Fprintln(w)
	}
	if len(rec.Actions) == 0 {
		fmt.Fprintf(w, "None.\n")
		return
	}
	fmt.Fprintf(w, "| started (service time) | who | action | asked by | outcome |\n|---|---|---|---|---|\n")
	for _, a := range rec.Actions {
		when := string(a.ServiceTime)
		if when == "" {
			when = a.Wall
		}
		who := string(a.Who.User) + "@" + string(a.Who.Host)
		if a.Who.Principal != "" {
			who += " (" + string(a.Who.Principal) + ")"
		}
		out := a.State + ": " + tallyOf(a.Blobs)
		if a.Error != "" {
			out += "; " + string(a.Error)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", when, Md(who), Md(string(a.Action)), Md(string(a.Via)), Md(out))
	}
	type row struct{ when, who, name, target, outcome, now string }
	kinds := []struct {
		title   string
		actions []string
	}{{"Drains", []string{record.ActDrain}}, {"Restores", []string{record.ActRestore}}, {"Acks and clears", []string{record.ActAck, record.ActClear}},
		{"Edits and resubmits", []string{record.ActEdit, record.ActResubmit, record.ActRepair}}}
	for _, k := range kinds {
		var rows []row
		for _, a := range rec.Actions {
			if !slices.Contains(k.actions, string(a.Action)) {
				continue
			}
			when := string(a.ServiceTime)
			if when == "" {
				when = a.Wall
			}
			for _, b := range a.Blobs {
				if b.Outcome == "" || !rules.Outcome(b.Outcome).Done() {
					continue
				}
				rows = append(rows, row{when, string(a.Who.User) + "@" + string(a.Who.Host), string(b.Name), string(b.Target), string(b.Outcome), string(b.Now.Fate)})
			}
		}
		fmt.Fprintf(w, "\n### %s: %d blob(s)\n\n", k.title, len(rows))
		if len(rows) == 0 {
			fmt.Fprintf(w, "None.\n")
			continue
		}
		fmt.Fprintf(w, "| blob | written as | when | by | outcome | now |\n|---|---|---|---|---|---|\n")
		for _, x := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", Md(x.name), Md(x.target), x.when, Md(x.who), Md(x.outcome), Md(x.now))
		}
		mdEventsSince(w, rec.Actions, k.actions)
	}
}

// tallyOf counts a record's blobs per outcome, in replay's order.
func tallyOf(bs []LogBlobJSON) string {
	t, unknown := rules.Tally{}, 0
	for _, b := range bs {
		if b.Outcome == "" {
			unknown++ // an interrupted action's blob: its intent says it, no outcome was written
			continue
		}
		t[rules.Outcome(b.Outcome)]++
	}
	var parts []string
	for _, o := range rules.Outcomes {
		if n := t[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	if unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d with no outcome written", unknown))
	}
	if len(parts) == 0 {
		return "no blob"
	}
	return strings.Join(parts, ", ")
}

// mdEventsSince lists, under a kind's table, what became of the events of its blobs since the action (five a blob).
func mdEventsSince(w io.Writer, actions []LogRecordJSON, kinds []string) {
	first := true
	for _, a := range actions {
		if !slices.Contains(kinds, string(a.Action)) {
			continue
		}
		for _, b := range a.Blobs {
			if len(b.EventsSince) == 0 {
				continue
			}
			if first {
				fmt.Fprintf(w, "\nTheir events since, by id:\n\n")
				first = false
			}
			fmt.Fprintf(w, "- %s\n", MdSpan(string(b.Name)))
			for i, l := range b.EventsSince {
				if i == 5 {
					fmt.Fprintf(w, "  - … and %d more (deadletter trace NAME)\n", len(b.EventsSince)-i)
					break
				}
				fmt.Fprintf(w, "  - %s\n", Md(l))
			}
		}
	}
}
