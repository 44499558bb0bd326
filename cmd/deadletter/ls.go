package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/deadletter/deadletter/internal/heap"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

type lsOptions struct {
	f      *factory
	filter blobFilter
	out    *printFlags
}

// blobFilter narrows a listing the way an operator asks: by pane, subscription, verdict and age.
type blobFilter struct {
	pane, subscription, verdict string
	olderThan                   time.Duration
	// query is --filter: the dashboard's filter language (replay.ParseQuery), the same words selecting the same blobs.
	query  string
	parsed rules.Query
	// given says --filter was on the command line (given "" — an unset variable in a script — is refused, never
	// taken for no filter: a drain would take every stranded blob).
	given func() bool
	// view is --view: a saved view's filter, ANDed with --filter's words (once: viewed).
	view   string
	viewed bool
}

func (f *blobFilter) flags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.pane, "pane", "", "only this pane: stranded, quarantine, live, archived")
	fs.StringVar(&f.subscription, "subscription", "", "only this subscription (as in the blob name, any case)")
	fs.StringVar(&f.verdict, "verdict", "", "only blobs holding an event with this verdict (replay, cap, notIdempotent, unroutable, unknown), or malformed, crash, handled")
	durationVar(fs, &f.olderThan, "older-than", "only blobs at least this old (3d, 12h)")
	fs.StringVar(&f.query, "filter", "", "only what the dashboard's filter shows for the same words ('sub:webhooks verdict:cap hour:12-01')")
	f.given = func() bool { return fs.Changed("filter") }
	f.viewFlag(cmd)
	cmd.RegisterFlagCompletionFunc("pane", cobra.FixedCompletions([]string{"stranded", "quarantine", "live", "archived"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("verdict", cobra.FixedCompletions([]string{"replay", "cap", "notIdempotent", "unroutable", "unknown", "malformed", "crash", "handled"}, cobra.ShellCompDirectiveNoFileComp))
}

// queryFlag gives a command --filter alone: the commands that had no per-field filters (drain, ack).
func (f *blobFilter) queryFlag(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&f.query, "filter", "", what+" what the dashboard's filter shows for the same words ('sub:webhooks verdict:cap hour:12-01')")
	f.given = func() bool { return cmd.Flags().Changed("filter") }
	f.viewFlag(cmd)
}

// viewFlag gives a command --view: a saved view's filter (deadletter view add), its completion the views of the
// context in force.
func (f *blobFilter) viewFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.view, "view", "", "a saved view's filter (deadletter view list), ANDed with --filter's words")
	cmd.RegisterFlagCompletionFunc("view", completeViews)
}

// selectBy reads, before anything is selected, the payloads a query on what only a payload tells needs (of the
// blobs pool keeps), and returns the blobs of pool the filter keeps: a write never selects on an unread payload.
func (f *blobFilter) selectBy(ctx context.Context, l *replay.Loader, cfg rules.Config, snap *rules.Snapshot, pool func(*rules.Item) bool) func(*rules.Item) bool {
	if f.needsPayload() {
		l.HydrateWhere(ctx, snap, pool)
	}
	var cands []*rules.Item
	for _, it := range snap.Items {
		if pool(it) {
			cands = append(cands, it)
		}
	}
	f.judgeEvents(ctx, l, cfg, cands, snap.Now)
	return func(it *rules.Item) bool { return pool(it) && f.listed(it) && f.read(cfg, it, snap.Now) }
}

// judgeEvents reads, when the query asks what is inside the events (type:, subject:, id:, data.PATH:), the
// payloads of the items every other filter keeps, and gives the query their judgement: an item it could not read
// is not judged, and not selected.
func (f *blobFilter) judgeEvents(ctx context.Context, l *replay.Loader, cfg rules.Config, items []*rules.Item, now time.Time) {
	if !f.parsed.HasEventTerms() {
		return
	}
	rest := f.parsed.WithoutEvents()
	var todo []store.BlobInfo
	for _, it := range items {
		if f.listed(it) && f.readWith(rest, cfg, it, now) {
			todo = append(todo, it.Info)
		}
	}
	f.parsed = f.parsed.WithEvents(l.MatchEvents(ctx, todo, f.parsed))
}

// readDetail is read for a blob already read whole (restore reads each copy before it decides): its events are
// judged from its payload.
func (f *blobFilter) readDetail(cfg rules.Config, d *replay.Detail) bool {
	q := f.parsed
	if q.HasEventTerms() && d.ReadErr == "" && d.Payload != nil { // (unread: not judged, so not kept)
		q = q.WithEvents(rules.EventMatches{d.Name: q.MatchesEvents(cfg, d.Payload.Events)})
	}
	return f.readWith(q, cfg, &d.Item, d.Now)
}

// pointers are the items of a page, for judgeEvents.
func pointers(items []rules.Item) []*rules.Item {
	out := make([]*rules.Item, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func (f *blobFilter) validate(a *factory) error {
	if err := f.useView(a); err != nil {
		return err
	}
	if f.pane != "" {
		if _, ok := rules.ParsePane(f.pane); !ok {
			return usagef("--pane %q: want stranded, quarantine, live or archived", f.pane)
		}
	}
	if f.verdict != "" {
		if !rules.IsVerdictFilter(f.verdict) {
			return usagef("--verdict %q: want %s", f.verdict, rules.VerdictFilterWords)
		}
	}
	if f.olderThan < 0 {
		return usagef("--older-than must be ≥ 0")
	}
	if f.given != nil && f.given() && strings.TrimSpace(f.query) == "" {
		return usagef("--filter is empty: give the words that select the blobs (an unset variable in a script?), or leave --filter out")
	}
	if f.query != "" {
		q, err := rules.ParseFilter(f.query)
		if err != nil {
			return usagef("--filter: %s", textfmt.Printable(err.Error()))
		}
		f.parsed = q
	}
	return nil
}

// useView puts the saved view's words before --filter's.
func (f *blobFilter) useView(a *factory) error {
	if f.view == "" || f.viewed {
		return nil
	}
	q, err := a.viewQuery(f.view)
	if err != nil {
		return err
	}
	f.query, f.viewed = strings.TrimSpace(q+" "+f.query), true
	return nil
}

// listed reports whether an item passes the filters that need only the listing.
func (f *blobFilter) listed(it *rules.Item) bool {
	return (f.pane == "" || it.Pane.String() == f.pane) &&
		(f.subscription == "" || strings.EqualFold(it.Parsed.Subscription, f.subscription)) &&
		(f.olderThan == 0 || it.Age >= f.olderThan) // (a Last-Modified ahead of the clock is a negative age: still listed)
}

// needsPayload reports whether the verdict filter has to read payloads (handled too: a quarantine copy makes a
// blob handled only when its own payload shows every event refused).
func (f *blobFilter) needsPayload() bool { return f.verdict != "" || f.parsed.NeedsPayload() }

// read reports whether an item (hydrated when needsPayload) passes the verdict filter and --filter.
func (f *blobFilter) read(cfg rules.Config, it *rules.Item, now time.Time) bool {
	return f.readWith(f.parsed, cfg, it, now)
}

func (f *blobFilter) readWith(q rules.Query, cfg rules.Config, it *rules.Item, now time.Time) bool {
	if !q.Matches(cfg, now, it, func() string { return rules.SearchKey(it) }) {
		return false
	}
	if f.verdict == "" {
		return true
	}
	match, _ := cfg.Is(it, now, f.verdict) // validate() let only verdicts, malformed, crash and handled through
	return match
}

func newCmdLs(f *factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	o := &lsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "every blob: pane, age, expiry, events, reasons, attempts, verdicts",
		Example: `  deadletter ls --pane stranded
  deadletter ls --subscription webhooks --older-than 2d -o wide
  deadletter ls --jsonl | jq -r 'select(.expiring) | .name'`,
		Annotations: lookingAtAnEstate(),
		Long: `ls lists the container, most urgent first: blobs about to be lost to the lifecycle rule, then stranded,
quarantined, live and archived ones, oldest first. On a terminal it fits the width; -o wide shows every column
in full, -o name only the names. --json keeps the documented shape; --jsonl streams one object per line, so its
memory does not grow with the container.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWith(runF, runLs)(cmd.Context(), o) },
	}
	o.filter.flags(cmd)
	o.out = declareOutput(cmd, outText, outWide, outName, outJSON, outJSONL)
	return cmd
}

func runLs(ctx context.Context, o *lsOptions) error {
	a := o.f
	if err := o.filter.validate(o.f); err != nil {
		return err
	}
	ctx, cancel := a.withTimeout(ctx, lookTimeout)
	defer cancel()
	s, err := a.session(ctx, a.timeout(lookTimeout))
	if err != nil {
		return err
	}
	l, cfg := s.Loader(), s.Config()
	l.NoCache = true // one look: --jsonl's memory must not grow with the container
	if o.out.anyJSON() {
		err = o.stream(ctx, s)
	} else {
		err = o.print(ctx, l, cfg)
	}
	if err != nil {
		return couldNotLook(ctx, err)
	}
	if !o.out.anyJSON() {
		a.sayRehearsal(s)
	}
	if cfg.Handlers == nil && !o.out.is(outName) && !o.out.anyJSON() {
		fmt.Fprintln(a.io.err, "note: no handler register (--handlers): routing and idempotency verdicts are unknown")
	}
	return nil
}

// streamChunk is how many blobs' payloads a streamed listing holds read at once (a page is up to 5,000).
const streamChunk = 256

// streamLs writes the listing as it arrives, page by page: each page's payloads are read, written and dropped, a
// chunk at a time.
func (o *lsOptions) stream(ctx context.Context, s *session.Session) error {
	defer heap.Streaming()()
	l, cfg := s.Loader(), s.Config()
	twins, err := l.Twins(ctx)
	if err != nil {
		return err
	}
	list := output.NewBlobList(o.f.io.out, l.Container.Describe(), s.Rehearsal(), o.out.jsonl())
	listedAt := time.Time{}
	err = l.Stream(ctx, func(items []rules.Item, now time.Time) error {
		listedAt = now
		twins.Mark(items)
		page := keep(items, o.filter.listed)
		for i := range page {
			if i%streamChunk == 0 { // read a chunk's payloads at a time, and let each go once written
				if i > 0 {
					clear(page[i-streamChunk : i])
				}
				chunk := page[i:min(i+streamChunk, len(page))]
				hydrate(ctx, l, chunk, nil)
				o.filter.judgeEvents(ctx, l, cfg, pointers(chunk), now)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			if it := &page[i]; o.filter.read(cfg, it, now) {
				if err := list.Add(output.ToBlobJSON(cfg, it, now), now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return list.Close(listedAt)
}

func keep(items []rules.Item, ok func(*rules.Item) bool) []rules.Item {
	out := items[:0]
	for i := range items {
		if ok(&items[i]) {
			out = append(out, items[i])
		}
	}
	return out
}

// hydrate reads the payloads of items in place (those want accepts; nil: all).
func hydrate(ctx context.Context, l *replay.Loader, items []rules.Item, want func(*rules.Item) bool) {
	var todo []store.BlobInfo
	at := map[string]int{}
	for i := range items {
		if it := &items[i]; it.Unread() && (want == nil || want(it)) {
			at[it.Name] = i
			todo = append(todo, it.Info)
		}
	}
	for _, h := range l.Hydrate(ctx, todo) {
		it := &items[at[h.Name]]
		it.Summary, it.ReadErr, it.ReadFailed = h.Summary, h.ReadErr, h.Failed
	}
}

// sayAhead says, on stderr, when blobs are dated ahead of the container's clock — an export of a rehearsal keeps
// its twin's times — so a negative age is explained rather than left to look like a bug.
func (f *factory) sayAhead(items []*rules.Item) {
	n, most := 0, time.Duration(0)
	for _, it := range items {
		if it.Age < -time.Minute {
			n, most = n+1, max(most, -it.Age)
		}
	}
	if n > 0 {
		fmt.Fprintf(f.io.err, "note: %d blob(s) are dated up to %s ahead of the container's clock (an export of a rehearsal keeps its twin's times): their ages read negative\n", n, textfmt.Duration(most))
	}
}

// printLs prints the listing for a person: every blob, most urgent first, fitted to the terminal. It holds the
// listing and never every payload: the blobs are sorted on what the listing tells (the one payload urgency needs —
// a root blob whose quarantine copy exists, handled or not — read first), then read, printed and let go a chunk at
// a time. Piped, where every column is as wide as its widest cell, the widths take a first pass of their own.
func (o *lsOptions) print(ctx context.Context, l *replay.Loader, cfg rules.Config) error {
	a := o.f
	snap, err := l.List(ctx)
	if err != nil {
		return err
	}
	// The snapshot's own items, pointed to, never copied: a copy of a million items was a second listing in memory.
	var ptrs []*rules.Item
	for _, it := range snap.Items {
		if o.filter.listed(it) {
			ptrs = append(ptrs, it)
		}
	}
	l.HydrateWhere(ctx, snap, func(it *rules.Item) bool { return o.filter.listed(it) && it.QuarantineTwin && rules.IsRoot(it.Name) })
	if ctx.Err() != nil {
		return ctx.Err()
	}
	present.SortByUrgency(cfg, snap.Now, ptrs)
	a.sayAhead(ptrs)
	w := a.io.out
	if o.out.is(outName) {
		return o.inChunks(ctx, l, cfg, snap.Now, ptrs, o.filter.needsPayload(), func(it *rules.Item) { fmt.Fprintln(w, textfmt.Printable(it.Name)) })
	}
	cols, widths := o.columns(w)
	if widths == nil { // no terminal to fit: every column as wide as its widest cell — a pass of its own
		fit := slices.Clone(cols)
		for i := range fit {
			fit[i].Max = textfmt.Width(fit[i].Title)
		}
		err := o.inChunks(ctx, l, cfg, snap.Now, ptrs, true, func(it *rules.Item) {
			r := []present.Row{present.RowOf(cfg, it, snap.Now)}
			for i, c := range present.FitColumns(cols, r) {
				fit[i].Max = max(fit[i].Max, c.Max)
			}
		})
		if err != nil {
			return err
		}
		cols, widths = fit, make([]int, len(fit))
		for i := range fit {
			fit[i].Min = min(fit[i].Min, fit[i].Max)
			widths[i] = fit[i].Max
		}
	}
	printHead(w, cols, widths)
	return o.inChunks(ctx, l, cfg, snap.Now, ptrs, true, func(it *rules.Item) {
		printRow(w, cols, widths, present.RowOf(cfg, it, snap.Now))
	})
}

// lsChunk is how many blobs' payloads a text listing holds read at once.
const lsChunk = 512

// inChunks hands each item the filters keep to each, in order, a chunk at a time: the chunk's payloads read first
// when read is set (and their events judged, for a filter on them), and let go after.
func (o *lsOptions) inChunks(ctx context.Context, l *replay.Loader, cfg rules.Config, now time.Time, items []*rules.Item, read bool, each func(*rules.Item)) error {
	for i := 0; i < len(items); i += lsChunk {
		chunk := items[i:min(i+lsChunk, len(items))]
		if read {
			hydratePtrs(ctx, l, chunk)
			o.filter.judgeEvents(ctx, l, cfg, chunk, now)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, it := range chunk {
			if o.filter.read(cfg, it, now) {
				each(it)
			}
		}
		if read {
			for _, it := range chunk {
				it.Summary, it.ReadErr, it.ReadFailed = nil, "", false // (read again if another pass needs it)
			}
		}
	}
	return nil
}

// hydratePtrs reads the payloads of the unread items, in place.
func hydratePtrs(ctx context.Context, l *replay.Loader, items []*rules.Item) {
	var todo []store.BlobInfo
	var at []*rules.Item
	for _, it := range items {
		if it.Unread() {
			todo, at = append(todo, it.Info), append(at, it)
		}
	}
	for i, h := range l.Hydrate(ctx, todo) {
		if h.Name == "" {
			continue
		}
		for _, it := range at[i:] { // (Hydrate keeps the order given, leaving out what it did not reach)
			if it.Name == h.Name {
				it.Summary, it.ReadErr, it.ReadFailed = h.Summary, h.ReadErr, h.Failed
				break
			}
		}
	}
}

// columns are the listing's columns and their widths fitted to the terminal w writes to; nil widths when it
// writes to no terminal (every column then as wide as its widest cell, the reasons whole).
func (o *lsOptions) columns(w io.Writer) ([]present.BlobColumn, []int) {
	cols := slices.Clone(lsColumns)
	width := 0
	if !o.out.is(outWide) {
		width, _ = terminalWidth(w)
	}
	if width == 0 {
		for i := range cols {
			if cols[i].ID == present.ColReason.ID {
				cols[i] = present.ColReasonLong
			}
		}
		return cols, nil
	}
	for i := range cols { // fitted to a terminal: the PANE column says archived/ or quarantine/, the name need not
		if cols[i].ID == present.ColName.ID {
			cols[i] = present.ColNameInPane
		}
	}
	return cols, present.Layout(cols, width)
}

var lsColumns = []present.BlobColumn{present.ColPane, present.ColName, present.ColAge, present.ColDeletesIn, present.ColEvents,
	present.ColSize, present.ColAttempt, present.ColVerdicts, present.ColState, present.ColReason}

// printTable prints rows under their columns' titles, each column at its width (0: left out).
func printTable[R any](w io.Writer, cols []present.Column[R], widths []int, rows []R) {
	printHead(w, cols, widths)
	for _, r := range rows {
		printRow(w, cols, widths, r)
	}
}

// printHead prints the columns' titles; printRow one row under them.
func printHead[R any](w io.Writer, cols []present.Column[R], widths []int) {
	printLine(w, cols, widths, func(c present.Column[R], w int) string { return c.Head(w, "") })
}

func printRow[R any](w io.Writer, cols []present.Column[R], widths []int, r R) {
	printLine(w, cols, widths, func(c present.Column[R], w int) string { return c.Fit(c.Cell(r), w) })
}

func printLine[R any](w io.Writer, cols []present.Column[R], widths []int, cell func(c present.Column[R], w int) string) {
	var parts []string
	for i, c := range cols {
		if widths[i] > 0 {
			parts = append(parts, cell(c, widths[i]))
		}
	}
	fmt.Fprintln(w, strings.TrimRight(strings.Join(parts, " "), " "))
}

// terminalWidth is the width of the terminal w writes to, if it is one.
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := fileOf(w)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0, false
	}
	width, _, err := term.GetSize(f.Fd())
	return width, err == nil && width > 0
}
