package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	f      *factory
	to     string
	all    bool
	out    *printFlags
	filter blobFilter // --filter QUERY and ls's narrowing flags
	names  []string
}

func newCmdExport(f *factory, runF func(context.Context, *exportOptions) error) *cobra.Command {
	o := &exportOptions{f: f}
	cmd := &cobra.Command{
		Use:         "export NAME... --to DIR | export --all [filters] --to DIR | export --filter QUERY --to DIR",
		Short:       "copy blobs, with their metadata and tags, into a directory that --dir opens as a container",
		Annotations: lookingAtAnEstate(),
		Long: `export copies blobs — their bytes, content type, metadata, index tags and Last-Modified — into DIR in the
directory backend's own format, so deadletter --dir DIR opens the export as a container (show, check, report, a
twin). It never writes over a file: a name DIR already holds is left and reported. It refuses names that differ
from another's only by case (one file on a case-insensitive disk) or that would fall under the directory's own
.deadletter folder, never follows a link, and writes files readable by you only (0600, folders 0700): these are
production payloads on a laptop. --all takes every blob, narrowed by ls's filters (--pane, --subscription,
--verdict, --older-than); --filter takes the blobs the dashboard's filter QUERY shows (sub:, reason:, hour:,
is:, verdict: and plain words, as / types them). The handler register is not part of a container: pass --handlers with --dir DIR.

--all and --filter copy as the container is listed, page by page, so memory does not grow with the container;
the files are made durable together at the end (one sync of the file system), not one by one. An export that
was stopped before that (a crash, kill -9) marks DIR: from then on each export into it compares every name DIR
holds with the source, and one that differs (left short by the crash) is reported, never taken for done.
The text lists the first 20 blobs not written and counts the rest; -o json lists every one.`,
		Example: `  deadletter export --all --pane quarantine --to ./incident-1130
  deadletter export --filter 'sub:webhooks is:malformed' --to ./webhooks-malformed
  deadletter --dir ./incident-1130 check`,
		ValidArgsFunction: f.completeNames(replay.AnyBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names = args
			return runWith(runF, runExport)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.to, "to", "", "the directory to export into (created 0700 when missing)")
	cmd.Flags().BoolVar(&o.all, "all", false, "every blob the filters keep")
	o.out = declareOutput(cmd, outText, outJSON)
	o.filter.flags(cmd)
	cmd.MarkFlagDirname("to")
	return cmd
}

// shownRefusals is how many blobs not written the text names; it counts the rest.
const shownRefusals = 20

// check refuses an export's flags that do not make one (usage errors, exit 2), before anything is read.
func (o *exportOptions) check(args []string, container string) error {
	narrowed := o.filter.pane != "" || o.filter.subscription != "" || o.filter.verdict != "" || o.filter.olderThan != 0
	if err := o.filter.useView(o.f); err != nil {
		return err
	}
	switch {
	case o.to == "":
		return usagef("export needs --to DIR: the directory to write the blobs into")
	case (o.all || o.filter.query != "") && len(args) > 0:
		return usagef("export takes names, or --all / --filter: not both")
	case !o.all && o.filter.query == "" && len(args) == 0:
		return usagef("export needs blob names (or their GUIDs or fragments), --all, or --filter QUERY")
	case !o.all && o.filter.query == "" && narrowed:
		return usagef("--pane, --subscription, --verdict and --older-than narrow --all or --filter")
	}
	if err := o.filter.validate(o.f); err != nil {
		return err
	}
	if container != "" && overlap(container, o.to) { // the export's files would land in the container as blobs
		return usagef("--to %s and the container %s overlap: the export would write into what it copies", textfmt.Printable(o.to), textfmt.Printable(container))
	}
	return nil
}

func runExport(ctx context.Context, o *exportOptions) error {
	a, args := o.f, o.names
	if err := o.check(args, a.g.dir); err != nil {
		return err
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	l := s.Loader()
	// Named blobs are resolved in a snapshot of the container (fragments, GUIDs); --all and --filter stream.
	var snap *rules.Snapshot
	var missing []rules.Result
	var names []string
	if len(args) > 0 {
		if snap, err = l.List(ctx); err != nil {
			return couldNotLook(ctx, err)
		}
		if names, missing, err = replay.ResolveNamed(a.io.err, snap, a.g.container, args, replay.AnyBlob); err != nil {
			return err
		}
	} else {
		l.NoCache = true // one look: the export's memory must not grow with the container
	}
	abs, _ := filepath.Abs(o.to)
	describe := s.Estate()
	rep := a.newExportReport(o.out.json(), describe, abs)
	rep.rehearsal = s.Rehearsal()
	if rep.rehearsal { // (its blobs keep the twin's times: how far ahead of this machine they run)
		if now, err := s.Container().Now(ctx); err == nil {
			rep.ahead = time.Until(now)
		}
	}
	defer rep.close()
	if snap != nil && len(names) == 0 { // none of the names is a blob: no directory is made for nothing
		rep.notMade = true
		if err := rep.print(missing, nil); err != nil {
			return err
		}
		return exitCode{code: exitNotDone}
	}
	listErr, err := o.copy(ctx, s, snap, names, rep, abs)
	if err != nil {
		return err
	}
	if err := rep.print(missing, listErr); err != nil {
		return err
	}
	switch {
	case wasInterrupted(ctx):
		return exitCode{code: exitInterrupted, err: errors.New("interrupted: the blobs not reached were not exported")}
	case listErr != nil:
		return couldNotLook(ctx, listErr)
	case rep.refused > 0 || len(missing) > 0:
		return exitCode{code: exitNotDone}
	}
	return nil
}

// copy exports into the directory (made 0700 when new): the named blobs of snap, or — with no snapshot — every
// blob the filters keep as the container is listed. listErr is a listing that stopped part way (what was copied is
// reported); err an export that could not be made or finished, or a listing that stopped before anything was.
func (o *exportOptions) copy(ctx context.Context, s *session.Session, snap *rules.Snapshot, names []string, rep *exportReport, abs string) (listErr, err error) {
	dst, err := dirstore.CreatePrivate(o.to)
	if err != nil {
		return nil, err
	}
	ex, err := replay.StartExport(ctx, dst, s.Container(), s.Estate(), rep.add)
	if err != nil {
		return nil, fmt.Errorf("export to %s: %w", textfmt.Printable(abs), err)
	}
	o.f.noteComparing(ex, abs)
	if snap != nil {
		for _, n := range names {
			if i, ok := snap.Lookup(n); ok {
				ex.Add(snap.Items[i].Info)
			}
		}
	} else {
		listErr = o.stream(ctx, s.Loader(), s.Config(), ex)
	}
	if err := ex.Finish(); err != nil {
		return nil, fmt.Errorf("export to %s: %w", textfmt.Printable(abs), err)
	}
	if listErr != nil && rep.written+rep.refused == 0 {
		return nil, couldNotLook(ctx, listErr) // (nothing to report)
	}
	return listErr, nil
}

// noteComparing says on stderr that the export compares what the directory holds: it is marked by an export that
// stopped before its files were durable.
func (f *factory) noteComparing(ex *replay.Exporter, abs string) {
	if ex.Resumed() {
		fmt.Fprintf(f.io.err, "note: an export into %s stopped before its files were made durable (a crash?): each name it holds is compared with the source\n", textfmt.Printable(abs))
	}
}

// streamExport lists the container page by page and hands each blob the filters keep to the export: nothing of
// the listing is kept once its page is handed over.
func (o *exportOptions) stream(ctx context.Context, l *replay.Loader, cfg rules.Config, ex *replay.Exporter) error {
	twins, err := l.Twins(ctx)
	if err != nil {
		return err
	}
	return l.Stream(ctx, func(items []rules.Item, now time.Time) error {
		twins.Mark(items)
		page := keep(items, o.filter.listed)
		if o.filter.needsPayload() {
			hydrate(ctx, l, page, nil)
		}
		o.filter.judgeEvents(ctx, l, cfg, pointers(page), now)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for i := range page {
			if it := &page[i]; o.filter.read(cfg, it, now) {
				ex.Add(it.Info)
			}
		}
		return nil
	})
}

// exportReport takes each blob's copy as it is reported and keeps only what the output needs: counts, the first
// shownRefusals refusals for the text, and — for -o json — the written blobs streamed out as they come and the
// refused ones spooled to a temporary file, so a million blobs print without being held.
type exportReport struct {
	w        io.Writer
	json     bool
	describe string
	to       string
	// rehearsal: what is exported is a twin's, its times the twin's clock; ahead, how far that clock runs ahead of
	// this machine's.
	rehearsal bool
	ahead     time.Duration

	written, refused int
	held, differs    int // of refused: names the directory held already, and of those, ones not the source's
	bytes            int64
	first, different []store.Copied // (the text's: the first refusals, and the first different files apart — the ones to act on)
	started          bool
	spool            *os.File
	spooled          *bufio.Writer
	err              error

	notMade bool // nothing named was found, so the directory was not made

	progress *os.File // stderr on a terminal, else nil
	last     time.Time
}

func (a *factory) newExportReport(json bool, describe, to string) *exportReport {
	r := &exportReport{w: a.io.out, json: json, describe: describe, to: to}
	if f, ok := fileOf(a.io.err); ok && isatty.IsTerminal(f.Fd()) {
		r.progress = f
	}
	return r
}

func (r *exportReport) add(c store.Copied) {
	if c.Err == nil {
		r.written++
		r.bytes += c.Size
	} else {
		r.refused++
		switch {
		case errors.Is(c.Err, replay.ErrDiffers):
			r.differs++
		case errors.Is(c.Err, store.ErrAlreadyExists):
			r.held++
		}
	}
	switch {
	case r.json && c.Err == nil:
		r.writeJSON(output.ExportedJSON{Name: output.Text(c.Name), Size: c.Size})
	case r.json:
		r.spoolJSON(output.ExportRefusedJSON{Name: output.Text(c.Name), Error: output.Text(exportError(c.Err))})
	case errors.Is(c.Err, replay.ErrDiffers) && len(r.different) < shownRefusals:
		r.different = append(r.different, c)
	case c.Err != nil && !errors.Is(c.Err, replay.ErrDiffers) && len(r.first) < shownRefusals:
		r.first = append(r.first, c)
	}
	if r.progress != nil && time.Since(r.last) > 100*time.Millisecond {
		r.last = time.Now()
		fmt.Fprintf(r.progress, "\rexporting: %d written (%s), %d not\x1b[K", r.written, textfmt.Bytes(r.bytes), r.refused)
	}
}

func (r *exportReport) head() {
	if !r.started {
		r.started = true
		fmt.Fprintf(r.w, "{\n  \"estate\": %s,\n  \"to\": %s,", textfmt.AppendJSON(nil, r.describe), textfmt.AppendJSON(nil, r.to))
		if r.rehearsal {
			io.WriteString(r.w, "\n  \"rehearsal\": true,")
		}
		io.WriteString(r.w, "\n  \"written\": [")
	}
}

func (r *exportReport) writeJSON(v output.ExportedJSON) {
	line, err := output.Marshal(v)
	if err != nil {
		r.fail(err)
		return
	}
	sep := ",\n    "
	if !r.started || r.written == 1 {
		sep = "\n    "
	}
	r.head()
	if _, err := fmt.Fprintf(r.w, "%s%s", sep, line); err != nil {
		r.fail(err)
	}
}

func (r *exportReport) spoolJSON(v output.ExportRefusedJSON) {
	line, err := output.Marshal(v)
	if err != nil {
		r.fail(err)
		return
	}
	if r.spool == nil {
		if r.spool, err = os.CreateTemp("", "deadletter-export-refused-"); err != nil {
			r.fail(err)
			return
		}
		r.spooled = bufio.NewWriter(r.spool)
	}
	r.spooled.Write(line)
	r.spooled.WriteByte('\n')
}

func (r *exportReport) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// print ends the output: the JSON document's refused blobs, totals and any error that stopped the listing, or
// the text's refusals (the first shownRefusals, files different from the source first), the blobs not found and
// the summary line.
func (r *exportReport) print(missing []rules.Result, listErr error) error {
	if r.progress != nil && r.written+r.refused > 0 {
		fmt.Fprint(r.progress, "\r\x1b[K")
	}
	if r.json {
		return r.printJSON(missing, listErr)
	}
	shown := append(r.different, r.first[:min(len(r.first), shownRefusals-len(r.different))]...)
	for _, c := range shown {
		fmt.Fprintf(r.w, "not written  %s: %s\n", textfmt.Printable(c.Name), textfmt.Printable(exportError(c.Err)))
	}
	if more := r.refused - len(shown); more > 0 {
		fmt.Fprintf(r.w, "… and %d more not written (-o json lists every one); in all, %d the directory held already, %d of them different from the source, and %d for other reasons\n",
			more, r.held+r.differs, r.differs, r.refused-r.held-r.differs)
	}
	for _, m := range missing {
		fmt.Fprintf(r.w, "not found    %s: %s\n", textfmt.Printable(m.Name), textfmt.Printable(m.Reason.Err))
	}
	if r.notMade {
		_, err := fmt.Fprintf(r.w, "nothing of %s exported: no blob named was found (%s was not made)\n", textfmt.Printable(r.describe), textfmt.Printable(r.to))
		return err
	}
	_, err := fmt.Fprintf(r.w, "%d blob(s) (%s) of %s written to %s; open it with deadletter --dir %s\n", r.written, textfmt.Bytes(r.bytes),
		textfmt.Printable(r.describe), textfmt.Printable(r.to), textfmt.Printable(r.to))
	if r.ahead > time.Minute && err == nil {
		_, err = fmt.Fprintf(r.w, "its blobs keep the twin's times, which run %s ahead of this machine's clock: opened with --dir, each reads %s younger (the newest dated ahead of the clock, with a negative age)\n",
			textfmt.Duration(r.ahead), textfmt.Duration(r.ahead))
	}
	return err
}

func (r *exportReport) printJSON(missing []rules.Result, listErr error) error {
	r.head()
	if r.written > 0 {
		io.WriteString(r.w, "\n  ")
	}
	io.WriteString(r.w, "],\n  \"refused\": [")
	n := 0
	item := func(line []byte) {
		sep := ",\n    "
		if n == 0 {
			sep = "\n    "
		}
		n++
		fmt.Fprintf(r.w, "%s%s", sep, line)
	}
	if r.spool != nil {
		if err := r.spooled.Flush(); err != nil {
			r.fail(err)
		} else if _, err := r.spool.Seek(0, io.SeekStart); err != nil {
			r.fail(err)
		} else {
			sc := bufio.NewScanner(r.spool)
			sc.Buffer(make([]byte, 64*1024), 16<<20)
			for sc.Scan() {
				item(sc.Bytes())
			}
			if err := sc.Err(); err != nil {
				r.fail(err)
			}
		}
	}
	for _, m := range missing {
		line, err := output.Marshal(output.ExportRefusedJSON{Name: output.Text(m.Name), Error: output.Text(m.Reason.Err)})
		if err != nil {
			return err
		}
		item(line)
	}
	if n > 0 {
		io.WriteString(r.w, "\n  ")
	}
	tail, err := output.Marshal(output.ExportTotalsJSON{Written: r.written, Bytes: r.bytes, Refused: r.refused + len(missing)})
	if err != nil {
		return err
	}
	fmt.Fprintf(r.w, "],\n  \"totals\": %s", tail)
	if listErr != nil {
		fmt.Fprintf(r.w, ",\n  \"error\": %s", textfmt.AppendJSON(nil, listErr.Error()))
	}
	if _, err := io.WriteString(r.w, "\n}\n"); err != nil {
		return err
	}
	return r.err
}

// close removes the spool file.
func (r *exportReport) close() {
	if r.spool != nil {
		r.spool.Close()
		os.Remove(r.spool.Name())
	}
}

// exportError says why a blob was not exported, in the words an operator acts on.
func exportError(err error) string {
	switch {
	case errors.Is(err, replay.ErrDiffers):
		return replay.ErrDiffers.Error() + ": an earlier export into it stopped before its files were made durable (a crash can leave one short or empty); never written over: remove it and export again"
	case errors.Is(err, store.ErrAlreadyExists):
		return "the directory holds that name already: never written over"
	case errors.Is(err, store.ErrCaseCollision):
		return err.Error() + ": one file on a case-insensitive disk; export it into another directory"
	}
	return err.Error()
}
