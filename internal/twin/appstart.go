package twin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// The Function App's starts, and the estate's app-start drain each worker start runs (docs/estate.md, "The drain
// closes it at app start"; the rule is rules.Config.AppStartTakes).

// The kinds of start a script holds. A start and a restart are operations on the app (Azure's activity log
// records them); a scale-out is a new worker the platform starts, which the activity log never shows.
const (
	AppStarted   = "start"
	AppRestarted = "restart"
	AppScaledOut = "scale-out"
)

// AppStart is one start of the Function App in a script: at At (from the script's start), Workers workers at once
// (each runs the drain over its own listing), of Kind, for Why.
type AppStart struct {
	At      time.Duration `json:"at"`
	Kind    string        `json:"kind"`
	Workers int           `json:"workers"`
	Why     string        `json:"why,omitempty"`
	// ListingFails: the drain's listing of the container fails at this start (the hook never rejects: the app
	// starts normally, and every blob waits for the next start).
	ListingFails bool `json:"listingFails,omitempty"`
}

// Operated reports whether the start is an operation on the app, which the activity log records.
func (s AppStart) Operated() bool { return s.Kind != AppScaledOut }

// maxStartWorkers bounds the workers one start runs at once.
const maxStartWorkers = 100

func (s AppStart) check(i int) error {
	switch {
	case s.At < 0:
		return fmt.Errorf("starts[%d].at %s: before the script's start", i, s.At)
	case s.Kind != AppStarted && s.Kind != AppRestarted && s.Kind != AppScaledOut:
		return fmt.Errorf("starts[%d].kind %q: want start, restart or scale-out", i, s.Kind)
	case s.Workers < 1 || s.Workers > maxStartWorkers:
		return fmt.Errorf("starts[%d].workers %d: want 1 to %d", i, s.Workers, maxStartWorkers)
	}
	return nil
}

// AddStart adds a start to the script, after any at the same time (so a start already run keeps its place).
func (s *Script) AddStart(st AppStart) {
	i := sort.Search(len(s.Starts), func(i int) bool { return s.Starts[i].At > st.At })
	s.Starts = append(s.Starts[:i:i], append([]AppStart{st}, s.Starts[i:]...)...)
}

// StartRecord is one start the twin ran: when, what kind, and what its workers re-uploaded.
type StartRecord struct {
	At         time.Time `json:"at"`
	Kind       string    `json:"kind"`
	Workers    int       `json:"workers"`
	Reuploaded int       `json:"reuploaded"`
	// Raced are the re-uploads a worker lost to another's (its conditional write met a newer ETag, or the blob
	// was gone): the same blob is never re-uploaded twice by one start.
	Raced int `json:"raced"`
	// Handled are the blobs it re-uploaded that the replay had already handled (an archived copy beside them):
	// their events go out a second time.
	Handled int `json:"handled"`
	// ListingFailed: the drain could not list the container, and re-uploaded nothing.
	ListingFailed bool `json:"listingFailed,omitempty"`
}

// maxStarts bounds the starts a twin remembers.
const maxStarts = 200

// nextStart is the script's next start the twin has not run (ok false: none).
func (tw *Twin) nextStart() (AppStart, bool) {
	if tw.st.NextStart < len(tw.script.Starts) {
		return tw.script.Starts[tw.st.NextStart], true
	}
	return AppStart{}, false
}

// appStart is one start of the Function App: each of its workers runs the estate's drain at once — every worker
// lists the container, then re-uploads what it listed, each re-upload a write conditional on the ETag it listed, so
// two workers racing for one blob re-upload it once. A re-upload raises a BlobCreated like any other write.
func (tw *Twin) appStart(ctx context.Context, s AppStart) error {
	tw.st.NextStart++
	rec := StartRecord{At: tw.st.Now, Kind: s.Kind, Workers: s.Workers, ListingFailed: s.ListingFails}
	listings := make([][]store.BlobInfo, max(1, s.Workers))
	for w := range listings {
		if s.ListingFails {
			break
		}
		l, err := tw.startListing(ctx)
		if err != nil {
			return err
		}
		listings[w] = l
	}
	for _, l := range listings {
		for _, bi := range l {
			if err := tw.reupload(ctx, bi, &rec); err != nil {
				return err
			}
		}
	}
	tw.st.Totals.StartReuploaded += rec.Reuploaded
	tw.st.Starts = append(tw.st.Starts, rec)
	if len(tw.st.Starts) > maxStarts {
		tw.st.Starts = tw.st.Starts[len(tw.st.Starts)-maxStarts:]
	}
	return nil
}

// startListing is what one worker's drain lists and would re-upload: the root blobs at least a TTL old.
func (tw *Twin) startListing(ctx context.Context) ([]store.BlobInfo, error) {
	var out []store.BlobInfo
	err := tw.dir.List(ctx, "", func(p store.Page) error {
		for _, bi := range p.Blobs {
			if tw.cfg.AppStartTakes(&rules.Item{Info: bi}, tw.st.Now) {
				out = append(out, store.BlobInfo{Name: bi.Name, ETag: bi.ETag, ContentType: bi.ContentType})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// reupload is one worker's re-upload of one blob it listed: the same bytes, written only if the blob is still
// the version listed.
func (tw *Twin) reupload(ctx context.Context, bi store.BlobInfo, rec *StartRecord) error {
	b, err := tw.dir.Read(ctx, bi.Name, store.MaxBlobBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rec.Raced++
		return nil
	case err != nil:
		return nil // the hook never rejects: a blob it cannot read waits for the next start
	}
	// (A blob another worker re-uploaded since this one listed it reads the same bytes: the write's condition on
	// the ETag listed is what refuses the second re-upload.)
	archived, _ := rules.Twins(bi.Name)
	_, aerr := tw.dir.Stat(ctx, archived)
	_, err = tw.c.Write(ctx, bi.Name, b.Body, store.WriteOptions{IfMatch: bi.ETag, ContentType: bi.ContentType})
	switch {
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		rec.Raced++
		return nil
	case err != nil:
		return fmt.Errorf("twin: the app's start re-uploading %s: %w", bi.Name, err)
	}
	rec.Reuploaded++
	if aerr == nil {
		rec.Handled++
		if tw.st.StartHandled == nil {
			tw.st.StartHandled = map[string]bool{}
		}
		tw.st.StartHandled[bi.Name] = true
	}
	return nil
}

// OperatedStarts is the twin's answer to Azure's activity log: the Function App's starts (and restarts) as operations,
// newest last, at or before now. Scale-outs are left out, as the activity log leaves them out.
func (tw *Twin) OperatedStarts() []time.Time {
	var out []time.Time
	for _, r := range tw.st.Starts {
		if r.Kind != AppScaledOut {
			out = append(out, r.At)
		}
	}
	return out
}

// The Function App as a script changes it (twin script set app …).
const (
	AppStop     = "stop"
	AppStartNow = "start"
	AppRestart  = "restart"
	AppScaleOut = "scale-out"
)

// AppChange is one edit of the Function App in a script: stopped from From until To (every handler and the
// replay down with Status; a start at To when it ends), started at From (its stop ended there), restarted, or
// scaled out by Workers new workers. Each start runs the estate's drain.
type AppChange struct {
	Kind     string
	From, To time.Duration
	Status   int
	Workers  int
	Why      string
}

// AppDown reports whether the Function App is stopped at offset t: every handler and the replay down.
func (s *Script) AppDown(t time.Duration) bool {
	return s.appWindow(AllHandlers, t) != nil && s.appWindow(ReplayFunction, t) != nil
}

func (s *Script) appWindow(who string, t time.Duration) *Window {
	for i := range s.Windows {
		if w := &s.Windows[i]; w.Sub == who && t >= w.From && t < w.To {
			return w
		}
	}
	return nil
}

// ApplyApp makes an edit of the Function App: refused when it does not fit the app as the script has it (a
// start of a running app, a restart or scale-out of a stopped one).
func (s *Script) ApplyApp(c AppChange) error {
	workers := max(1, c.Workers)
	if workers > maxStartWorkers {
		return fmt.Errorf("--workers %d: want 1 to %d", workers, maxStartWorkers)
	}
	switch c.Kind {
	case AppStop:
		if c.To <= c.From {
			return fmt.Errorf("until must come after at")
		}
		if err := s.canStop(c.From, c.To); err != nil {
			return err
		}
		why := c.Why
		if why == "" {
			why = "the Function App stopped by hand"
		}
		for _, who := range []string{AllHandlers, ReplayFunction} {
			s.Windows = append(s.Windows, Window{Sub: who, From: c.From, To: c.To, Status: c.Status, Outcome: OutcomeOf(c.Status), Why: why})
		}
		sort.SliceStable(s.Windows, func(i, j int) bool { return s.Windows[i].From < s.Windows[j].From })
		if c.To != UntilFurtherNotice && !slices.ContainsFunc(s.Starts, func(st AppStart) bool { return st.At == c.To }) {
			s.AddStart(AppStart{At: c.To, Kind: AppStarted, Workers: workers, Why: "the Function App started again at the end of its stop"})
		}
		return nil
	case AppStartNow:
		if !s.AppDown(c.From) {
			return fmt.Errorf("the Function App is running then: restart restarts it, scale-out adds workers")
		}
		s.endStop(c.From)
		s.AddStart(AppStart{At: c.From, Kind: AppStarted, Workers: workers, Why: orSet(c.Why, "the Function App started by hand")})
		return nil
	case AppRestart, AppScaleOut:
		if s.AppDown(c.From) {
			return fmt.Errorf("the Function App is stopped then: start starts it")
		}
		kind, why := AppRestarted, "the Function App restarted by hand"
		if c.Kind == AppScaleOut {
			kind, why = AppScaledOut, fmt.Sprintf("the Function App scaled out by %d worker(s) by hand", workers)
		}
		s.AddStart(AppStart{At: c.From, Kind: kind, Workers: workers, Why: orSet(c.Why, why)})
		return nil
	}
	return fmt.Errorf("%s: want stop, start, restart or scale-out", c.Kind)
}

// canStop says why the app cannot be stopped from from until to: a stop of it already over part of that stretch,
// or a start of it inside it (a start, a restart or a scale-out of a stopped app is none; a start at to, the
// stop's end, is the start the stop ends in).
func (s *Script) canStop(from, to time.Duration) error {
	for _, w := range s.Windows {
		if w.Sub == AllHandlers && w.From < to && from < w.To {
			return fmt.Errorf("the Function App is stopped already over part of that stretch (twin script show shows when)")
		}
	}
	for _, st := range s.Starts {
		if st.At >= from && st.At < to {
			return fmt.Errorf("a %s of the Function App is scripted inside that stretch, at +%s from the script's start: a stopped app does not %s", st.Kind, st.At, st.Kind)
		}
	}
	return nil
}

// endStop ends at t the app's stop windows (every handler's and the replay's) that cover t, and the start their
// end had set (the start at t replaces it).
func (s *Script) endStop(t time.Duration) {
	var ended []time.Duration
	for i := range s.Windows {
		if w := &s.Windows[i]; (w.Sub == AllHandlers || w.Sub == ReplayFunction) && t >= w.From && t < w.To {
			ended = append(ended, w.To)
			w.To = t
		}
	}
	kept := s.Windows[:0]
	for _, w := range s.Windows {
		if w.To > w.From {
			kept = append(kept, w)
		}
	}
	s.Windows = kept
	starts := s.Starts[:0:0]
	for _, st := range s.Starts {
		if st.At > t && st.Kind == AppStarted && slices.Contains(ended, st.At) {
			continue
		}
		starts = append(starts, st)
	}
	s.Starts = starts
}

func orSet(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// ChangeApp applies an edit of the Function App and saves the twin.
func (tw *Twin) ChangeApp(c AppChange) error {
	script := tw.script
	script.Windows = slices.Clone(script.Windows)
	script.Starts = slices.Clone(script.Starts)
	if err := script.ApplyApp(c); err != nil {
		return err
	}
	tw.script = script
	return tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()})
}
