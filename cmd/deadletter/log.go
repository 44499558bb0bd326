package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

type logOptions struct {
	f      *factory
	since  time.Duration
	filter string
	view   string
	events bool
	out    *printFlags
}

func newCmdLog(f *factory, runF func(context.Context, *logOptions) error) *cobra.Command {
	o := &logOptions{f: f}
	cmd := &cobra.Command{
		Use:   "log [--since D] [--filter Q] [-o json]",
		Short: "the record: every action on this estate, by whom, and what became of each blob since",
		Long: `log lists the record of the estate's actions — drain, restore, ack and clear, edit and resubmit — newest first:
when (wall and service time), who (user@host), the command or key that asked, each blob with its ETag before and
after and its outcome, and what became of it since, from the container as it is now (replayed and archived,
quarantined, restored, still stranded, gone). An action whose outcome was never written (killed mid-way) is
shown interrupted. Records are read from the local log in the state directory and, when the context names one
(--audit-container), the shared audit container every operator on call writes to. --filter takes the
dashboard's filter words (matched against each record's blobs) plus who:USER and action:drain|restore|ack|….`,
		Args:        cobra.NoArgs,
		Annotations: lookingAtAnEstate(),
		RunE:        func(cmd *cobra.Command, _ []string) error { return runWith(runF, runLog)(cmd.Context(), o) },
	}
	durationVar(cmd.Flags(), &o.since, "since", "only records of actions started this long ago or later (0: all)")
	cmd.Flags().BoolVar(&o.events, "events", false, "follow each action's events too: every pass since (republished |n, dead-lettered again, quarantined, repaired) to where each stands now (reads the payloads)")
	cmd.Flags().StringVar(&o.view, "view", "", "a saved view's filter (deadletter view list), ANDed with --filter's words")
	cmd.RegisterFlagCompletionFunc("view", completeViews)
	cmd.Flags().StringVar(&o.filter, "filter", "", "the dashboard's filter words against each record's blobs, plus who:USER and action:NAME ('action:drain who:alice sub:webhooks')")
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

// logFilter is log's --filter: the blob query, and the who: and action: terms.
type logFilter struct {
	q     rules.Query
	extra []rules.ExtraTerm
}

func parseLogFilter(s string) (logFilter, error) {
	q, extra, err := rules.ParseQueryWith(s, "who", "action")
	if err == nil && q.Empty() && len(extra) == 0 {
		err = fmt.Errorf("the query holds no words")
	}
	for _, t := range extra {
		// an action no record can name (a typo: action:drian) is refused, as is:bogus is, not matched by nothing
		if t.Field == "action" && err == nil && !slices.ContainsFunc(record.Actions, t.Has) {
			err = fmt.Errorf("action:%s names no action; the actions are %s", t.Value, strings.Join(record.Actions, ", "))
		}
	}
	return logFilter{q, extra}, err
}

// judgeEvents reads, when the query asks what is inside the events, the blobs the records name that are still in
// the container (a blob gone cannot be judged: its record matches only through another blob).
func (f *logFilter) judgeEvents(ctx context.Context, l *replay.Loader, snap *rules.Snapshot, rs []record.Record) {
	if !f.q.HasEventTerms() {
		return
	}
	seen := map[string]bool{}
	var todo []store.BlobInfo
	for _, r := range rs {
		for _, b := range r.Blobs() {
			for _, n := range []string{b.Name, b.Target} {
				if i, ok := snap.Lookup(n); ok && n != "" && !seen[n] {
					seen[n] = true
					todo = append(todo, snap.Items[i].Info)
				}
			}
		}
	}
	f.q = f.q.WithEvents(l.MatchEvents(ctx, todo, f.q))
}

// matches reports whether a record passes: every who: and action: term, and — when the query has blob words —
// at least one of its blobs (as listed now, or as its name tells where it is gone).
func (f logFilter) matches(cfg rules.Config, snap *rules.Snapshot, r record.Record) bool {
	for _, t := range f.extra {
		var hit bool
		switch t.Field {
		case "who":
			w := r.Intent.Who
			hit = t.Has(w.User) || t.Has(w.Host) || t.Has(w.Principal) || t.Has(w.User+"@"+w.Host)
		case "action":
			hit = t.Has(r.Intent.Action)
		}
		if hit == t.Not {
			return false
		}
	}
	if f.q.Empty() {
		return true
	}
	for _, b := range r.Blobs() {
		for _, n := range []string{b.Name, b.Target} {
			if n == "" {
				continue
			}
			it := cfg.MakeItem(store.BlobInfo{Name: n}, snap.Now)
			if i, ok := snap.Lookup(n); ok {
				it = *snap.Items[i]
			}
			if f.q.Matches(cfg, snap.Now, &it, func() string { return rules.SearchKey(&it) }) {
				return true
			}
		}
	}
	return false
}

func runLog(ctx context.Context, o *logOptions) error {
	a := o.f
	if o.since < 0 {
		return usagef("--since must not be negative")
	}
	if o.view != "" {
		q, err := a.viewQuery(o.view)
		if err != nil {
			return err
		}
		o.filter = strings.TrimSpace(q + " " + o.filter)
	}
	var f logFilter
	if o.filter != "" {
		var err error
		if f, err = parseLogFilter(o.filter); err != nil {
			return usagef("--filter: %s", textfmt.Printable(err.Error()))
		}
	}
	ctx, cancel := a.withTimeout(ctx, lookTimeout)
	defer cancel()
	s, err := a.session(ctx, a.timeout(lookTimeout))
	if err != nil {
		return err
	}
	// The record first, then the listing: what an action wrote is in the listing that follows it, and the
	// record's parsing is let go before the listing is held (a million-blob drain's record is 357 MB).
	h, err := s.History(ctx)
	if err != nil {
		return err
	}
	a.saySkipped(h.Skipped)
	l, cfg := s.Loader(), s.Config()
	l.NoCache = true // one look
	snap, err := s.List(ctx)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	if f.q.NeedsPayload() {
		l.HydrateWhere(ctx, snap, nil)
	}
	f.judgeEvents(ctx, l, snap, h.Records)
	me := s.Who()
	var keep []record.Record
	for _, r := range h.Records {
		if o.since > 0 && r.Intent.Wall.Before(time.Now().Add(-o.since)) {
			continue
		}
		if o.filter != "" && !f.matches(cfg, snap, r) {
			continue
		}
		keep = append(keep, r)
	}
	var evs map[record.Key][]rules.Journey
	if o.events {
		if evs, err = record.Events(ctx, l, snap, keep, h.Records); err != nil {
			return couldNotLook(ctx, err)
		}
	}
	var lj output.LogJSON // (built for JSON alone: text follows each blob as it prints it, holding none of them)
	if o.out.json() {
		lj = toLogJSON(ctx, snap, h, keep, me, evs, cfg.Separator)
		lj.Rehearsal = s.Rehearsal()
	}
	return o.out.print(a.io.out, lj, func() {
		a.sayRehearsal(s)
		printLog(ctx, a.io.out, snap, h, keep, me, logAsked(o), evs, cfg)
	})
}

// history is the estate's record (session.History): the local log and the shared audit container, this estate's
// records only, and the lines that could not be read.
type history = record.History

// whereWords name a Whereabouts' kind in JSON.
var whereWords = map[replay.WhereKind]string{replay.WhereHere: "here", replay.WhereArchived: "archived", replay.WhereQuarantined: "quarantined",
	replay.WhereRestored: "restored", replay.WhereDeleted: "deleted"}

func toLogJSON(ctx context.Context, snap *rules.Snapshot, h history, rs []record.Record, me record.Who, evs map[record.Key][]rules.Journey, sep string) output.LogJSON {
	out := output.LogJSON{Estate: output.Text(snap.Container), Local: output.Text(h.Local), Shared: output.OptText(h.Shared), Records: []output.LogRecordJSON{}}
	for _, e := range h.Skipped {
		out.Skipped = append(out.Skipped, output.Text(e.Error()))
	}
	for _, r := range rs {
		in := r.Intent
		rj := output.LogRecordJSON{ID: in.ID, Action: output.Text(in.Action), State: r.State(), Wall: output.RFC3339(in.Wall), ServiceTime: output.OptTime(in.Service),
			Who:  output.LogWhoJSON{User: output.Text(in.Who.User), Host: output.Text(in.Who.Host), Principal: output.OptText(in.Who.Principal)},
			Mine: r.Mine(me), Via: output.Text(in.Via), Detail: output.OptText(in.Detail), Shared: r.Shared, IntentGone: r.IntentGone, PartsMissing: r.PartsMissing, Blobs: []output.LogBlobJSON{},
			Estate: output.LogEstateJSON{Context: output.OptText(in.Estate.Context), Where: output.Text(in.Estate.Where), Account: output.OptText(in.Estate.Account),
				Directory: output.OptText(in.Estate.Directory), Container: output.OptText(in.Estate.Container)}}
		if r.Outcome != nil {
			rj.Ended, rj.Error = output.OptText(output.RFC3339(r.Outcome.Wall)), output.OptText(r.Outcome.Error)
		}
		for f := range record.Follow(ctx, snap, r) {
			b := f.Blob
			bj := output.LogBlobJSON{Name: output.Text(b.Name), ETag: output.OptText(b.ETag), Target: output.OptText(b.Target), ETagAfter: output.OptText(b.ETagAfter),
				Outcome: output.OptText(b.Outcome), Reason: output.OptText(recordedReason(b)), Retired: output.OptText(b.Retired)}
			bj.Now = output.LogNowJSON{Where: whereWords[f.Where.Kind], Name: output.OptText(f.Where.Name), Fate: output.Text(f.Fate)}
			if !f.Where.At.IsZero() {
				bj.Now.At = output.OptText(output.RFC3339(f.Where.At))
			}
			if f.Err != "" {
				bj.Now = output.LogNowJSON{Where: "unknown", Fate: output.Text("could not be told: " + f.Err)}
			}
			if evs != nil {
				js := evs[record.Key{Record: in.ID, Blob: b.Name}]
				bj.Events = output.JourneysJSON(js)
				for _, j := range js {
					bj.EventsSince = append(bj.EventsSince, "event "+textfmt.Printable(j.Original)+": "+present.JourneySince(j, b.Name, sep))
				}
			}
			rj.Blobs = append(rj.Blobs, bj)
		}
		out.Records = append(out.Records, rj)
	}
	return out
}

// logAsked names what a log kept its records by: --filter, --since, or both.
func logAsked(o *logOptions) string {
	var by []string
	if o.filter != "" {
		by = append(by, "--filter "+textfmt.Printable(o.filter))
	}
	if o.since > 0 {
		by = append(by, "--since "+textfmt.Duration(o.since))
	}
	return strings.Join(by, " and ")
}

// recordSummary is the line under a record's heading: its tally, its detail, and what is known to be missing.
func recordSummary(r record.Record) string {
	line := r.Tally()
	if r.Intent.Detail != "" {
		line += " · " + r.Intent.Detail
	}
	if r.Outcome != nil && r.Outcome.Error != "" {
		line += " · failed: " + r.Outcome.Error
	}
	if r.IntentGone {
		line += " · its intent line was not read (rotated away, never reached this record, or skipped above): dated by its outcome"
	}
	if r.PartsMissing > 0 {
		line += fmt.Sprintf(" · %d of the lines it was written in were not read: its blobs below are those of the lines read", r.PartsMissing)
	}
	return line
}

// printLog prints the records, newest first: a heading line each, then a line per blob with what became of it.
// asked is what kept rs out of the record's records ("" for nothing).
func printLog(ctx context.Context, w io.Writer, snap *rules.Snapshot, h history, rs []record.Record, me record.Who, asked string,
	evs map[record.Key][]rules.Journey, cfg rules.Config) {
	where := "record: " + h.Local
	if h.Shared != "" {
		where += " and " + h.Shared
	} else {
		where += " (local only: no --audit-container, so other operators' actions are not here)"
	}
	fmt.Fprintln(w, textfmt.Printable(where))
	if len(rs) == 0 && len(h.Records) > 0 && asked != "" { // there are records: what was asked kept none of them
		fmt.Fprintf(w, "%s matched none of the %d action(s) recorded on %s\n", asked, len(h.Records), textfmt.Printable(snap.Container))
		return
	}
	if len(rs) == 0 {
		fmt.Fprintln(w, "no action recorded on "+textfmt.Printable(snap.Container))
		return
	}
	for _, r := range rs {
		in := r.Intent
		mine := ""
		if r.Mine(me) {
			mine = " (you)"
		}
		svc := ""
		if in.Service != nil {
			svc = " · service " + textfmt.Time(*in.Service)
		}
		fmt.Fprintf(w, "\n%s  %s  %s by %s%s · %s%s\n", in.Wall.Local().Format("2006-01-02 15:04:05"), strings.ToUpper(r.State()),
			textfmt.Printable(in.Action), textfmt.Printable(in.Who.String()), mine, textfmt.Printable(in.Via), svc)
		fmt.Fprintf(w, "  %s\n", textfmt.Printable(recordSummary(r)))
		for f := range record.Follow(ctx, snap, r) {
			b := f.Blob
			outcome := b.Outcome
			if outcome == "" {
				outcome = "?"
			}
			fate := f.Fate
			if f.Err != "" {
				fate = "could not be told: " + f.Err
			}
			etags := ""
			switch {
			case b.ETagAfter != "":
				etags = " · " + b.ETag + " → " + b.ETagAfter
			case b.ETag != "":
				etags = " · " + b.ETag // (left as it was: nothing after)
			}
			target := ""
			if b.Target != "" {
				target = " → " + b.Target
			}
			fmt.Fprintf(w, "  %-9s %s%s%s\n", textfmt.Printable(outcome), textfmt.Printable(b.Name), textfmt.Printable(target), textfmt.Printable(etags))
			if why := recordedReason(b); why != "" {
				fmt.Fprintf(w, "            left: %s\n", why)
			}
			fmt.Fprintf(w, "            now: %s\n", textfmt.Printable(fate))
			printEvents(w, evs[record.Key{Record: in.ID, Blob: b.Name}], b.Name, cfg.Separator)
		}
	}
}

// toReportRecord is the report's record: every action, oldest first, with what became of each blob's events since
// (the report read every payload, so the index finds them without reading the container again).
func toReportRecord(ctx context.Context, l *replay.Loader, snap *rules.Snapshot, h history, me record.Who) *output.ReportRecordJSON {
	evs, err := record.Events(ctx, l, snap, h.Records, h.Records)
	if err != nil {
		evs = nil // (the actions stand without their events' journeys)
	}
	lj := toLogJSON(ctx, snap, h, h.Records, me, evs, l.Config.Separator)
	// Oldest first: a postmortem reads in time order.
	slices.Reverse(lj.Records)
	return &output.ReportRecordJSON{Local: lj.Local, Shared: lj.Shared, LocalOnly: h.Shared == "", Actions: lj.Records, Skipped: lj.Skipped}
}

// recordedReason words why a record's blob was left, refused or failed: the record keeps the reason's code and
// facts (record.Why), worded now as every other reason is; an older build's line kept its words; a code this build
// does not know (a newer build's) is said as the code.
func recordedReason(b record.Blob) string {
	switch {
	case b.Why == nil:
		return textfmt.Printable(b.Reason)
	}
	if r, ok := b.Why.Reason(); ok {
		return present.Reason(r, present.ForceByName)
	}
	return textfmt.Printable(b.Why.Code)
}

// logEventsShown is how many of a blob's events log --events follows in text (JSON has every one).
const logEventsShown = 5

// printEvents says what became of a recorded blob's events since the action.
func printEvents(w io.Writer, js []rules.Journey, blob, sep string) {
	for i, j := range js {
		if i == logEventsShown {
			fmt.Fprintf(w, "            … and %d more event(s) (deadletter trace NAME, or -o json, follows every one)\n", len(js)-i)
			return
		}
		fmt.Fprintf(w, "            event %s: %s\n", textfmt.Printable(j.Original), present.JourneySince(j, blob, sep))
	}
}
