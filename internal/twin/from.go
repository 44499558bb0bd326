package twin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// copyingFile marks a twin whose copy from its source is under way: a start --from that stopped (Ctrl-C, a lost
// connection, kill -9) is resumed by the next one, which copies only what is not there yet.
const copyingFile = "copying"

// From is what a twin of a container starts from: the source, listed once as it is copied (a snapshot, nothing
// of it kept but what infers the script), the configuration it is judged by, and Event Grid's verdicts.
type From struct {
	// Source is read only: listed blobs are read and copied, nothing is written to it.
	Source store.Container
	// Describe names the source for the twin's record: a context, a directory, an account and container — never
	// a credential.
	Describe string
	Config   rules.Config
	// Witness is Event Grid's verdicts as of the listing's service time (nil: none); with the listing's evidence
	// they infer the script (Infer).
	Witness func(now time.Time) rules.WitnessReport
	// Progress is told of each blob as it is copied (or found copied by an earlier, interrupted start).
	Progress func(store.Copied)
	// Listed is told how many blobs the listing has found so far, and whether it is complete.
	Listed func(n int, complete bool)
}

// witness is Event Grid's verdicts as of now, when the start was given a witness.
func (f From) witness(now time.Time) rules.WitnessReport {
	if f.Witness == nil {
		return rules.WitnessReport{}
	}
	return f.Witness(now)
}

// evidence is what a twin of a container keeps of its listing to infer the script (Infer): the subscriptions it
// names, and the blobs readiness looks at — each subscription's newest dead letter and those within the TTL
// before the listing's time — not the million others.
type evidence struct {
	cfg    rules.Config
	now    time.Time
	seen   map[string]bool
	subs   []string
	newest map[string]rules.Item
	recent []rules.Item
}

func (e *evidence) take(items []rules.Item, now time.Time) {
	if now.After(e.now) {
		e.now = now
	}
	for _, it := range items {
		s := it.Parsed.Subscription
		if s == "" || it.Refused != "" || !rules.ValidSubscriptionName(s) { // (no subscription is named so: nothing to script)
			continue
		}
		if !e.seen[s] {
			e.seen[s] = true
			e.subs = append(e.subs, s)
		}
		at, ok := rules.DeadLetteredAt(it.Info, it.Parsed)
		if !ok {
			continue
		}
		if n, had := e.newest[s]; !had || at.After(mustAt(n)) {
			e.newest[s] = it
		}
		if now.Sub(at) < e.cfg.TTL { // (a superset of those within the TTL at the listing's end: its clock only grows)
			e.recent = append(e.recent, it)
		}
	}
}

func mustAt(it rules.Item) time.Time {
	at, _ := rules.DeadLetteredAt(it.Info, it.Parsed)
	return at
}

// failureSample is how many of a subscription's newest dead letters the failures are read from.
const failureSample = 20

// failures read how each subscription's deliveries failed, from the twin's copies of its newest dead letters (the
// newest, and those in the TTL, up to failureSample): the failure most of their events met — each event's
// lastHttpStatusCode and lastDeliveryOutcome — counting first the events whose retries ran out (a poison event
// dead-letters at once with a 400 and says nothing of the handler). Blobs that cannot be read say nothing.
func (e *evidence) failures(ctx context.Context, d store.Container) map[string]Failure {
	bySub := map[string][]rules.Item{}
	for i := range e.recent {
		s := e.recent[i].Parsed.Subscription
		bySub[s] = append(bySub[s], e.recent[i])
	}
	out := map[string]Failure{}
	for sub, newest := range e.newest {
		sample := []rules.Item{newest}
		recent := bySub[sub]
		sort.Slice(recent, func(i, j int) bool { return mustAt(recent[i]).After(mustAt(recent[j])) })
		for _, it := range recent {
			if len(sample) == failureSample {
				break
			}
			if it.Name != newest.Name {
				sample = append(sample, it)
			}
		}
		var retried, any failureCount
		for _, it := range sample {
			b, err := d.Read(ctx, it.Name, blob.MaxBytes)
			if err != nil {
				continue
			}
			for _, ev := range rules.ParsePayload(b.Body).Events {
				f, ok := failureOf(ev)
				if !ok {
					continue
				}
				any.add(f)
				if ev.DeadLetterReason == "MaxDeliveryAttemptsExceeded" || ev.DeadLetterReason == "TimeToLiveExceeded" {
					retried.add(f)
				}
			}
		}
		if f, ok := retried.top(); ok {
			out[sub] = f
		} else if f, ok := any.top(); ok {
			out[sub] = f
		}
	}
	return out
}

// failureOf is the failure an event's last delivery met (ok false: it says none, or says it was delivered).
func failureOf(ev rules.Event) (Failure, bool) {
	if ev.LastDeliveryOutcome == "" && ev.LastHTTPStatusCode == nil {
		return Failure{}, false
	}
	f := Failure{Outcome: ev.LastDeliveryOutcome}
	if c := ev.LastHTTPStatusCode; c != nil && *c >= 100 && *c <= 599 { // (another number is no HTTP status: the word decides)
		f.Status = int(*c)
	} else if st, ok := statusOf(f.Outcome); ok {
		f.Status = st
	} // else no HTTP status was recorded: no response (SocketError), 0 as a timeout is
	if f.Outcome == "" {
		f.Outcome = OutcomeOf(f.Status)
	}
	return f, f.Status < 200 || f.Status > 299
}

// failureCount counts failures in the order first met: top is the most met (ties: the first met — the newest).
type failureCount struct {
	order []Failure
	n     map[Failure]int
}

func (c *failureCount) add(f Failure) {
	if c.n == nil {
		c.n = map[Failure]int{}
	}
	if c.n[f] == 0 {
		c.order = append(c.order, f)
	}
	c.n[f]++
}

func (c *failureCount) top() (Failure, bool) {
	var best Failure
	found := false
	for _, f := range c.order {
		if !found || c.n[f] > c.n[best] {
			best, found = f, true
		}
	}
	return best, found
}

// script is what the evidence implies.
func (e *evidence) script(wit rules.WitnessReport, seen map[string]Failure) Script {
	items := make([]*rules.Item, 0, len(e.newest)+len(e.recent))
	for _, s := range sortedKeys(e.newest) {
		it := e.newest[s]
		items = append(items, &it)
	}
	for i := range e.recent {
		if n := e.newest[e.recent[i].Parsed.Subscription]; n.Name != e.recent[i].Name {
			items = append(items, &e.recent[i])
		}
	}
	sort.Strings(e.subs)
	return Infer(e.subs, e.cfg.Readiness(items, e.now), wit, seen)
}

// copyChunk is how many blobs one call of the copy engine takes: the twin's memory is the listing and the chunks'
// results under way, whatever the size of the container.
const copyChunk = 256

// copyWorkers is how many chunks are copied at once.
const copyWorkers = rules.DefaultConcurrency

// StartFrom creates a twin of a container on an empty (or new) directory: a copy of every blob — name, bytes,
// content type, metadata, index tags and Last-Modified, by the engine export uses (store.Copy) — then the twin's
// state: its clock at the source's service time, stopped; every copied blob known to it; the root blobs still
// inside the TTL on their trigger's way (as Event Grid still holds their BlobCreated); every event the blobs hold
// outstanding; the script as inferred. The directory is the operator's only (0700, files 0600); the source's
// credential is kept nowhere. An interrupted start is resumed by the next one on the same directory.
func StartFrom(ctx context.Context, root string, f From) (*Twin, error) {
	rules := RulesOf(f.Config)
	if err := rules.check(); err != nil {
		return nil, err
	}
	place, err := made.Find(root)
	resume := false
	switch {
	case err == nil && place.Kind == made.Twin:
		if _, serr := os.Stat(place.File(copyingFile)); serr != nil {
			return nil, fmt.Errorf("%s already holds a twin (twin status shows it; twin rm removes it)", root)
		}
		resume = true
	case err == nil:
		return nil, fmt.Errorf("%s holds a %s deadletter made, not a twin: give twin start an empty or new directory", root, place.Kind)
	case !made.IsNotMade(err):
		return nil, err
	}
	d, err := dirstore.CreatePrivate(root)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(d.Root(), 0o700); err != nil {
		return nil, err
	}
	if !resume {
		if l, err := store.ListAll(ctx, d); err != nil {
			return nil, err
		} else if len(l.Blobs) > 0 {
			return nil, fmt.Errorf("%s is not empty: a twin starts on an empty directory", root)
		}
		if place, err = made.Make(root, made.Twin); err != nil {
			return nil, err
		}
	}
	held, err := place.Lock("twin start --from")
	if err != nil {
		return nil, err
	}
	tw, err := startFrom(ctx, d, place, held, f, rules)
	if err != nil {
		held.Unlock()
		return nil, err
	}
	return tw, nil
}

func startFrom(ctx context.Context, d *dirstore.Dir, place *made.Place, held *made.Held, f From, rules Rules) (*Twin, error) {
	if err := made.WriteFile(place.File(copyingFile), []byte(f.Describe+"\n")); err != nil {
		return nil, err
	}
	// The copy is resumable whatever a crash leaves (a blob short or missing is copied again): its writes are
	// made durable together at its end, not one by one.
	d.SetUnsynced(true)
	ev, err := copyFrom(ctx, d, f)
	d.SetUnsynced(false)
	if err == nil {
		err = d.Flush()
	}
	if err != nil {
		return nil, err
	}
	script := ev.script(f.witness(ev.now), ev.failures(ctx, d))
	if err := script.check(); err != nil {
		return nil, fmt.Errorf("the inferred script: %w", err)
	}
	now := ev.now.UTC().Truncate(time.Second)
	script.Opens = 0
	tw := &Twin{root: d.Root(), place: place, held: held, dir: d, cfg: f.Config, script: script, st: State{Format: stateFormat,
		Scenario: script.Name, Source: f.Describe, Start: now, Now: now, Rules: &rules,
		NextPublish: map[string]time.Time{}, Batches: map[string][]deadLetter{}, BatchDue: map[string]time.Time{},
		known: newKnownSet(), Outstanding: map[string]bool{}, Violations: []string{}}}
	tw.c = &recorder{Container: d, tw: tw}
	d.SetClock(func() time.Time { return tw.st.Now })
	tw.cfg.Handlers = f.Config.Handlers
	if f.Config.Handlers != nil {
		reg, err := json.MarshalIndent(f.Config.Handlers, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := made.WriteFile(place.Register(), append(reg, '\n')); err != nil {
			return nil, err
		}
	} else {
		os.Remove(place.Register())
	}
	if err := tw.takeIn(ctx, now); err != nil {
		return nil, err
	}
	if err := tw.writeSnapshot(ctx); err != nil {
		return nil, err
	}
	if err := tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()}); err != nil {
		return nil, err
	}
	if err := os.Remove(place.File(copyingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return tw, nil
}

// takeIn is what the twin of a copied container knows: every blob, as copied — a root blob still inside the TTL
// with its BlobCreated on its way (Event Grid holds it until the hour from its write runs out; an older one's
// trigger is long gone) — and every event the blobs hold outstanding: published before the snapshot, in a blob
// now (read blob by blob, a few at once: nothing but a hash of each id is kept, the base of baseEvents).
func (tw *Twin) takeIn(ctx context.Context, now time.Time) error {
	var hashes []uint64
	err := tw.readBlobs(ctx, func(bi store.BlobInfo) bool {
		name := tw.st.known.set(bi.Name, bi.ETag, bi.LastModified)
		if rules.Triggers(name) && now.Sub(bi.LastModified) < tw.cfg.TTL {
			tw.owe(name, now, minTime(bi.LastModified, now))
		}
		return !isArchived(bi.Name) // an archived blob is a record of what was republished: not where an event is
	}, func(ids []string) {
		for _, id := range ids {
			hashes = append(hashes, idHash(id))
		}
	})
	if err != nil {
		return err
	}
	if err := tw.sealOwed(); err != nil {
		return err
	}
	tw.st.base = newBase(hashes)
	tw.st.BaseEvents = tw.st.base.len()
	tw.st.BaseGone = newBitmap(tw.st.BaseEvents)
	tw.st.Totals.Published += tw.st.BaseEvents
	if tw.place != nil {
		return writeBase(tw.place.File(baseFile), tw.st.base)
	}
	return nil
}

// readBlobs lists the twin's directory page by page and reads, scanWorkers at once, every blob list says to read
// (list is called for every blob listed, in order, on the listing's goroutine); found is called with the events
// each one holds (their original ids), one call at a time.
func (tw *Twin) readBlobs(ctx context.Context, list func(store.BlobInfo) bool, found func(ids []string)) error {
	sep := tw.cfg.Separator
	return tw.readBlobsNamed(ctx, list, func(_ string, ids []string) {
		for i, id := range ids {
			ids[i] = eventKey(id, sep)
		}
		found(ids)
	})
}

// readBlobsNamed is readBlobs with each blob's name and its events' ids as they stand (their counts kept).
func (tw *Twin) readBlobsNamed(ctx context.Context, list func(store.BlobInfo) bool, found func(name string, ids []string)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	names := make(chan string, 256)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range scanWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				b, err := tw.dir.Read(ctx, name, store.MaxBlobBytes)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				} else if err == nil {
					found(name, rawEventIDs(b.Body))
				}
				mu.Unlock()
			}
		}()
	}
	err := tw.dir.List(ctx, "", func(p store.Page) error {
		for _, bi := range p.Blobs {
			if !list(bi) {
				continue
			}
			select {
			case names <- bi.Name:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	close(names)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return err
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// copyFrom lists the source once, page by page, and copies each page as it comes, chunk by chunk with the one
// copy engine, copyWorkers chunks at once: nothing of a page is kept once copied but the evidence the script is
// inferred from. A name the twin holds already was copied by an interrupted start: its Last-Modified is put right
// (the step a kill may have cut short) and it counts as done. Any blob not copied fails the start, naming the
// first; the next start resumes — but for those LeftOut: the twin is made without them.
func copyFrom(ctx context.Context, d *dirstore.Dir, f From) (*evidence, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	failed, first := 0, ""
	chunks := make(chan []store.BlobInfo)
	var wg sync.WaitGroup
	var copyErr error
	tally := func(c store.Copied) { // each blob as it is done: the progress moves blob by blob
		mu.Lock()
		defer mu.Unlock()
		if c.Err != nil && !LeftOut(c.Err) {
			failed++
			if first == "" {
				first = fmt.Sprintf("%s: %v", c.Name, c.Err)
			}
		}
		if f.Progress != nil {
			f.Progress(c)
		}
	}
	for range copyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := copyChunks(ctx, d, f.Source, chunks, tally); err != nil {
				mu.Lock()
				copyErr = err
				mu.Unlock()
			}
		}()
	}
	ev := &evidence{cfg: f.Config, seen: map[string]bool{}, newest: map[string]rules.Item{}}
	listed := 0
	listErr := replay.NewLoader(f.Source, f.Config).Stream(ctx, func(items []rules.Item, now time.Time) error {
		ev.take(items, now)
		listed += len(items)
		if f.Listed != nil {
			f.Listed(listed, false)
		}
		for i := 0; i < len(items); i += copyChunk {
			chunk := make([]store.BlobInfo, 0, min(copyChunk, len(items)-i))
			for _, it := range items[i:min(i+copyChunk, len(items))] {
				chunk = append(chunk, it.Info)
			}
			select {
			case chunks <- chunk:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	close(chunks)
	wg.Wait()
	if f.Listed != nil && listErr == nil {
		f.Listed(listed, true)
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the copy was interrupted (the same twin start --from resumes it): %w", ctx.Err())
	case listErr != nil:
		return nil, fmt.Errorf("listing the source: %w", listErr)
	case copyErr != nil:
		return nil, copyErr
	case failed > 0:
		return nil, fmt.Errorf("%d blob(s) not copied (the same twin start --from resumes): first, %s", failed, first)
	}
	return ev, nil
}

// LeftOut reports whether a blob the copy did not write is left out of the twin for good rather than failed: an
// entry the source's store will not read (a link, a FIFO in a directory) or a name the twin's directory cannot
// hold (under its own .deadletter folder in any case; beside a blob named like a folder on its path), or one over
// the largest dead letter deadletter reads. Another start would fail on it again, so it does not stop
// this one; the twin rehearses without it, and the command says which.
func LeftOut(err error) bool {
	return errors.Is(err, store.ErrRefused) || errors.Is(err, store.ErrInvalidName) || errors.Is(err, store.ErrTooLarge) ||
		errors.Is(err, store.ErrNameTaken)
}

// copyChunks copies the chunks it is given until they end, telling tally of each blob: one an interrupted start
// copied already is taken as it is (resumeOne). It returns the last error of the copy itself.
func copyChunks(ctx context.Context, d *dirstore.Dir, source store.Container, chunks <-chan []store.BlobInfo, tally func(store.Copied)) error {
	var failed error
	for chunk := range chunks {
		byName := make(map[string]store.BlobInfo, len(chunk))
		for _, b := range chunk {
			byName[b.Name] = b
		}
		done := func(c store.Copied) {
			if errors.Is(c.Err, store.ErrAlreadyExists) {
				c.Err = resumeOne(ctx, d, source, byName[c.Name])
				c.Size = byName[c.Name].Size
			}
			tally(c)
		}
		if _, err := store.Copy(ctx, d, source, chunk, store.CopyOptions{Check: dirstore.PortableName, Progress: done}); err != nil {
			failed = err
		}
	}
	return failed
}

// resumeOne takes a blob an interrupted start copied: the same size as the source's, its Last-Modified the
// source's again. One cut short (the copy's writes are flushed only at its end) is copied again.
func resumeOne(ctx context.Context, d *dirstore.Dir, source store.Container, src store.BlobInfo) error {
	got, err := d.Stat(ctx, src.Name)
	if err != nil {
		return err
	}
	if got.Size != src.Size {
		if err := d.Delete(ctx, src.Name, ""); err != nil {
			return err
		}
		res, err := store.Copy(ctx, d, source, []store.BlobInfo{src}, store.CopyOptions{Check: dirstore.PortableName})
		if err != nil {
			return err
		}
		return res[0].Err
	}
	if !src.LastModified.IsZero() && !got.LastModified.Equal(src.LastModified) {
		return d.Backdate(ctx, src.Name, src.LastModified)
	}
	return nil
}

// SnapshotBlob is one blob of the twin as its rehearsal opened.
type SnapshotBlob struct {
	Name         string    `json:"name"`
	ETag         string    `json:"etag"`
	Size         int64     `json:"size"`
	LastModified time.Time `json:"lastModified"`
}

// writeSnapshot records the blobs the twin holds now, one a line: what twin diff compares the rehearsal with.
func (tw *Twin) writeSnapshot(ctx context.Context) error {
	if tw.place == nil {
		return nil
	}
	return opfile.ReplaceWith(tw.place.File(snapshotFile), 0o600, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		return tw.dir.List(ctx, "", func(p store.Page) error {
			for _, bi := range p.Blobs {
				if err := enc.Encode(SnapshotBlob{Name: bi.Name, ETag: bi.ETag, Size: bi.Size, LastModified: bi.LastModified}); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Snapshot calls f with each blob the twin held when its rehearsal opened, in name order.
func (tw *Twin) Snapshot(f func(SnapshotBlob) error) error {
	file, err := os.Open(tw.place.File(snapshotFile))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the twin of %s keeps no snapshot of its opening (made by an older deadletter: twin rm and start it again)", tw.root)
	}
	if err != nil {
		return err
	}
	defer file.Close()
	dec := json.NewDecoder(bufio.NewReader(file))
	for {
		var b SnapshotBlob
		if err := dec.Decode(&b); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", tw.place.File(snapshotFile), err)
		}
		if err := f(b); err != nil {
			return err
		}
	}
}

// ChangeScript is the one place a twin's script is changed (twin script set, the dashboard): the change is
// applied to the script (Script.Apply) and the twin saved, its clock stopped where it stands. It returns the
// change as applied (Who in the script's spelling).
func (tw *Twin) ChangeScript(c Change) (Change, error) {
	return tw.changeScript(c, dirstore.Clock{At: tw.st.Now, Wall: time.Now()})
}

// changeScript applies a change and saves the twin with its clock as clock (a running rehearsal's keeps running).
func (tw *Twin) changeScript(c Change, clock dirstore.Clock) (Change, error) {
	script := tw.script
	script.Windows = append([]Window(nil), script.Windows...)
	c, err := script.Apply(c)
	if err != nil {
		return c, err
	}
	tw.script = script
	return c, tw.save(clock)
}

// Remove deletes a twin: its directory and everything deadletter kept for it. Only a directory deadletter
// recorded making as a twin (or the demo's) is removed, and only while no process runs it; anything else is
// refused, its files left.
func Remove(root string) error {
	p, err := Find(root)
	if err != nil {
		return err
	}
	if strings.TrimSpace(p.Dir) == "" || filepath.Dir(p.Dir) == p.Dir {
		return fmt.Errorf("refusing to remove %q", p.Dir)
	}
	held, err := p.Lock("twin rm")
	if err != nil {
		return err
	}
	err = os.RemoveAll(p.Dir)
	held.Unlock()
	if err != nil {
		return err
	}
	return p.Forget()
}
