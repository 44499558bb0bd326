package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	to     string
	all    bool
	out    *output
	filter blobFilter // --filter QUERY and ls's narrowing flags
}

func (a *app) exportCmd() *cobra.Command {
	var o exportOptions
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
		ValidArgsFunction: a.completeNames(anyBlob),
		RunE:              func(cmd *cobra.Command, args []string) error { return a.runExport(cmd, args, &o) },
	}
	cmd.Flags().StringVar(&o.to, "to", "", "the directory to export into (created 0700 when missing)")
	cmd.Flags().BoolVar(&o.all, "all", false, "every blob the filters keep")
	o.out = declareOutput(cmd, outText, outJSON)
	o.filter.flags(cmd)
	cmd.MarkFlagDirname("to")
	return cmd
}

// exportMarker is in the export directory's state folder while an export writes into it unsynced: the next
// export that finds it knows the last one stopped before its files were made durable.
const exportMarker = "exporting"

// exportChunk is how many blobs one call of the copy engine takes, exportWorkers how many chunks are copied at
// once and exportAhead how many chunks may be copied or waiting for an earlier one to be reported: the export's
// memory is those chunks, whatever the size of the container.
const (
	exportChunk   = 256
	exportWorkers = rules.DefaultConcurrency
	exportAhead   = 2 * exportWorkers
)

// shownRefusals is how many blobs not written the text names; it counts the rest.
const shownRefusals = 20

// check refuses an export's flags that do not make one (usage errors, exit 2), before anything is read.
func (o *exportOptions) check(args []string, container string) error {
	narrowed := o.filter.pane != "" || o.filter.subscription != "" || o.filter.verdict != "" || o.filter.olderThan != 0
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
	if err := o.filter.validate(); err != nil {
		return err
	}
	if container != "" && overlap(container, o.to) { // the export's files would land in the container as blobs
		return usagef("--to %s and the container %s overlap: the export would write into what it copies", textfmt.Printable(o.to), textfmt.Printable(container))
	}
	return nil
}

func (a *app) runExport(cmd *cobra.Command, args []string, o *exportOptions) error {
	if err := o.check(args, a.g.dir); err != nil {
		return err
	}
	ctx := cmd.Context()
	l, cfg, err := a.g.loader()
	if err != nil {
		return err
	}
	// Named blobs are resolved in a snapshot of the container (fragments, GUIDs); --all and --filter stream.
	var snap *rules.Snapshot
	var missing []rules.Result
	var names []string
	if len(args) > 0 {
		if snap, err = l.List(ctx); err != nil {
			return couldNotLook(ctx, err)
		}
		if names, missing, err = resolveNamed(a.io.err, snap, a.g.container, args, anyBlob); err != nil {
			return err
		}
	} else {
		l.NoCache = true // one look: the export's memory must not grow with the container
	}
	abs, _ := filepath.Abs(o.to)
	describe := a.describe(l.Container)
	rep := a.newExportReport(o.out.json(), describe, abs)
	rep.rehearsal = rehearsal(l.Container)
	defer rep.close()
	if snap != nil && len(names) == 0 { // none of the names is a blob: no directory is made for nothing
		rep.notMade = true
		if err := rep.print(missing, nil); err != nil {
			return err
		}
		return exitCode{code: exitNotDone}
	}
	dst, err := dirstore.CreatePrivate(o.to)
	if err != nil {
		return err
	}
	ex, err := startExport(ctx, dst, l.Container, describe, rep.add)
	if err != nil {
		return fmt.Errorf("export to %s: %w", textfmt.Printable(abs), err)
	}
	a.noteComparing(ex, abs)
	var listErr error
	if snap != nil {
		for _, n := range names {
			if i, ok := snap.Lookup(n); ok {
				ex.add(snap.Items[i].Info)
			}
		}
	} else {
		listErr = a.streamExport(ctx, l, cfg, o, ex)
	}
	if err := ex.finish(); err != nil {
		return fmt.Errorf("export to %s: %w", textfmt.Printable(abs), err)
	}
	if listErr != nil && rep.written+rep.refused == 0 {
		return couldNotLook(ctx, listErr) // (nothing to report)
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

// noteComparing says on stderr that the export compares what the directory holds: it is marked by an export that
// stopped before its files were durable.
func (a *app) noteComparing(ex *exporter, abs string) {
	if ex.resumed {
		fmt.Fprintf(a.io.err, "note: an export into %s stopped before its files were made durable (a crash?): each name it holds is compared with the source\n", textfmt.Printable(abs))
	}
}

// streamExport lists the container page by page and hands each blob the filters keep to the export: nothing of
// the listing is kept once its page is handed over.
func (a *app) streamExport(ctx context.Context, l *replay.Loader, cfg rules.Config, o *exportOptions, ex *exporter) error {
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
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for i := range page {
			if it := &page[i]; o.filter.read(cfg, it, now) {
				ex.add(it.Info)
			}
		}
		return nil
	})
}

// exporter copies the blobs handed to it (add, in the listing's order) into the export directory with the one
// copy engine (store.Copy), chunk by chunk, exportWorkers chunks at once, and reports every blob in the order it
// was handed over. Its writes are unsynced, made durable by one flush of the file system at the end (finish);
// the marker it leaves in the directory's state folder until then tells the next export that a crash may have
// left files short. A directory found so marked stays marked: which names the crashed export wrote is not known,
// so every later export into it compares the names it finds held.
type exporter struct {
	ctx      context.Context
	dst      *dirstore.Dir
	src      store.Container
	resumed  bool // an earlier export into dst stopped before its flush: names dst holds are compared
	unsynced bool // the writes are unsynced, the marker down: finish flushes
	report   func(store.Copied)
	folds    *foldSet
	chunk    []exportJob
	seq      int
	chunks   chan exportBatch
	ahead    chan struct{}
	wg       sync.WaitGroup

	mu      sync.Mutex
	done    map[int][]store.Copied // chunks copied, waiting for an earlier one to be reported
	next    int                    // the chunk to report next
	copyErr error
}

type exportJob struct {
	bi  store.BlobInfo
	err error // refused before the copy (a case collision)
}

type exportBatch struct {
	seq  int
	jobs []exportJob
}

// startExport lists dst once (its names claim their case-folded spellings), marks it as being exported into and
// starts the workers.
func startExport(ctx context.Context, dst *dirstore.Dir, src store.Container, describe string, report func(store.Copied)) (*exporter, error) {
	folds := newFoldSet()
	err := dst.List(ctx, "", func(p store.Page) error {
		for _, b := range p.Blobs {
			folds.claim(b.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, err = dirstore.ReadState(dst.Root(), exportMarker)
	resumed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	unsynced := dst.SetUnsynced(true) // (where the system cannot flush a file system, every write stays synced)
	if unsynced {
		// The marker is durable before any unsynced file lands.
		if err := dirstore.WriteState(dst.Root(), exportMarker, []byte(describe+"\n")); err != nil {
			return nil, err
		}
		if err := dst.Flush(); err != nil {
			return nil, err
		}
	}
	ex := &exporter{ctx: ctx, dst: dst, src: src, resumed: resumed, unsynced: unsynced, report: report, folds: folds,
		chunks: make(chan exportBatch), ahead: make(chan struct{}, exportAhead), done: map[int][]store.Copied{}}
	for range exportWorkers {
		ex.wg.Add(1)
		go ex.work()
	}
	return ex, nil
}

// add takes one blob, in the listing's order: a name that differs only by case from one taken or held before is
// refused here, so which one is written does not depend on the workers' timing.
func (ex *exporter) add(bi store.BlobInfo) {
	j := exportJob{bi: bi}
	if ex.folds.clash(bi.Name) {
		j.err = store.OpError("write", bi.Name, fmt.Errorf("%w (exported, or in the directory already)", store.ErrCaseCollision))
	} else {
		ex.folds.claim(bi.Name)
	}
	ex.chunk = append(ex.chunk, j)
	if len(ex.chunk) == exportChunk {
		ex.send()
	}
}

func (ex *exporter) send() {
	if len(ex.chunk) == 0 {
		return
	}
	ex.ahead <- struct{}{} // (freed when the chunk is reported; after ctx ends, Copy reports its blobs at once)
	ex.chunks <- exportBatch{seq: ex.seq, jobs: ex.chunk}
	ex.seq++
	ex.chunk = nil
}

func (ex *exporter) work() {
	defer ex.wg.Done()
	for b := range ex.chunks {
		res := make([]store.Copied, len(b.jobs))
		blobs := make([]store.BlobInfo, 0, len(b.jobs))
		at := make([]int, 0, len(b.jobs))
		for i, j := range b.jobs {
			if j.err != nil {
				res[i] = store.Copied{Name: j.bi.Name, Err: j.err}
				continue
			}
			blobs = append(blobs, j.bi)
			at = append(at, i)
		}
		n := 0
		_, err := store.Copy(ex.ctx, ex.dst, ex.src, blobs, store.CopyOptions{Check: dirstore.PortableName, Progress: func(c store.Copied) {
			if ex.resumed && errors.Is(c.Err, store.ErrAlreadyExists) {
				c.Err = ex.compare(blobs[n])
			}
			res[at[n]] = c
			n++
		}})
		ex.mu.Lock()
		if err != nil && ex.copyErr == nil {
			ex.copyErr = err
		}
		for i := range res {
			if res[i].Name == "" && res[i].Err == nil { // (Copy failed before reaching it)
				res[i] = store.Copied{Name: b.jobs[i].bi.Name, Err: err}
			}
		}
		ex.done[b.seq] = res
		for {
			r, ok := ex.done[ex.next]
			if !ok {
				break
			}
			delete(ex.done, ex.next)
			ex.next++
			for _, c := range r {
				ex.report(c)
			}
			<-ex.ahead
		}
		ex.mu.Unlock()
	}
}

// finish copies what is left, waits for the workers and makes every file written durable (one flush of the file
// system), then takes the marker away — what this export wrote is there whole, whatever stopped it — unless the
// directory was marked before it began (a crash's files may still be there: the names this export did not reach,
// the different ones it reported).
func (ex *exporter) finish() error {
	ex.send()
	close(ex.chunks)
	ex.wg.Wait()
	if !ex.unsynced {
		return ex.copyErr
	}
	ex.dst.SetUnsynced(false)
	if err := ex.dst.Flush(); err != nil {
		return fmt.Errorf("the files written were not made durable (the next export into the directory compares what it holds): %w", err)
	}
	if !ex.resumed {
		if err := dirstore.RemoveState(ex.dst.Root(), exportMarker); err != nil {
			return err
		}
	}
	return ex.copyErr
}

// errDiffers: after an export that stopped before its files were made durable, the directory holds a file under
// a blob's name that is not the source's blob (a crash can leave one short, empty or without its properties).
var errDiffers = errors.New("the directory holds a different file under that name")

// compare takes a name the directory held already, in an export after one that stopped before its flush: the
// same bytes, content type, metadata, index tags and Last-Modified as the source's is already there (as any
// name held); anything else is errDiffers, never written over.
func (ex *exporter) compare(bi store.BlobInfo) error {
	same, err := sameAsSource(ex.ctx, ex.dst, ex.src, bi)
	switch {
	case err != nil:
		return store.OpError("write", bi.Name, fmt.Errorf("the directory holds that name already, and comparing it with the source failed: %w", err))
	case !same:
		return store.OpError("write", bi.Name, errDiffers)
	}
	return store.OpError("write", bi.Name, store.ErrAlreadyExists)
}

// sameAsSource reports whether dst holds the source's blob under bi's name: what store.Copy writes.
func sameAsSource(ctx context.Context, dst *dirstore.Dir, src store.Container, bi store.BlobInfo) (bool, error) {
	got, err := dst.Read(ctx, bi.Name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	want, err := src.Read(ctx, bi.Name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	tags := bi.Tags
	if tr, ok := src.(store.TagReader); ok && tags == nil {
		if tags, err = tr.Tags(ctx, bi.Name); err != nil && !errors.Is(err, store.ErrForbidden) {
			return false, err
		}
	}
	meta, ct := want.Metadata, want.ContentType
	if meta == nil {
		meta = bi.Metadata
	}
	if ct == "" {
		ct = bi.ContentType
	}
	return bytes.Equal(got.Body, want.Body) && got.ContentType == ct && maps.Equal(folded(got.Metadata), folded(meta)) &&
		maps.Equal(got.Tags, tags) && (want.LastModified.IsZero() || got.LastModified.Equal(want.LastModified)), nil
}

// folded is metadata with its names in one case (Azure hands them back in its own).
func folded(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// foldSet is the export's check for names that differ only by case — a name itself or a folder of its path —
// among the blobs exported and the names the directory held: for each, the hash of its case-folded spelling and
// the hash of its own (16 bytes, not the names: a million names would keep some 100 MB). Two spellings whose
// folded hashes meet by chance (about 1 in 10^7 at a million names) are refused as a collision: reported, never
// written over.
type foldSet struct {
	seed maphash.Seed
	m    map[uint64]uint64
}

func newFoldSet() *foldSet { return &foldSet{seed: maphash.MakeSeed(), m: map[uint64]uint64{}} }

func (f *foldSet) each(name string, visit func(folded, exact uint64) bool) bool {
	for i := range name {
		if name[i] == '/' && visit(maphash.String(f.seed, strings.ToLower(name[:i+1])), maphash.String(f.seed, name[:i+1])) {
			return true
		}
	}
	return visit(maphash.String(f.seed, strings.ToLower(name)), maphash.String(f.seed, name))
}

func (f *foldSet) claim(name string) {
	f.each(name, func(folded, exact uint64) bool { f.m[folded] = exact; return false })
}

func (f *foldSet) clash(name string) bool {
	return f.each(name, func(folded, exact uint64) bool {
		got, ok := f.m[folded]
		return ok && got != exact
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
	// rehearsal: what is exported is a twin's, its times the twin's clock.
	rehearsal bool

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

func (a *app) newExportReport(json bool, describe, to string) *exportReport {
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
		case errors.Is(c.Err, errDiffers):
			r.differs++
		case errors.Is(c.Err, store.ErrAlreadyExists):
			r.held++
		}
	}
	switch {
	case r.json && c.Err == nil:
		r.writeJSON(exportedJSON{Name: text(c.Name), Size: c.Size})
	case r.json:
		r.spoolJSON(exportRefusedJSON{Name: text(c.Name), Error: text(exportError(c.Err))})
	case errors.Is(c.Err, errDiffers) && len(r.different) < shownRefusals:
		r.different = append(r.different, c)
	case c.Err != nil && !errors.Is(c.Err, errDiffers) && len(r.first) < shownRefusals:
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

func (r *exportReport) writeJSON(v exportedJSON) {
	line, err := marshal(v)
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

func (r *exportReport) spoolJSON(v exportRefusedJSON) {
	line, err := marshal(v)
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
		line, err := marshal(exportRefusedJSON{Name: text(m.Name), Error: text(m.Reason.Err)})
		if err != nil {
			return err
		}
		item(line)
	}
	if n > 0 {
		io.WriteString(r.w, "\n  ")
	}
	tail, err := marshal(exportTotalsJSON{Written: r.written, Bytes: r.bytes, Refused: r.refused + len(missing)})
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
	case errors.Is(err, errDiffers):
		return errDiffers.Error() + ": an earlier export into it stopped before its files were made durable (a crash can leave one short or empty); never written over: remove it and export again"
	case errors.Is(err, store.ErrAlreadyExists):
		return "the directory holds that name already: never written over"
	case errors.Is(err, store.ErrCaseCollision):
		return err.Error() + ": one file on a case-insensitive disk; export it into another directory"
	}
	return err.Error()
}
