package twin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deadletter/deadletter/internal/estate"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// replay runs the replay function over a blob, as the trigger's delivery does: the estate's own code path
// (internal/estate), whose every decision is the plan show predicts. A run that throws answers 500, so Event Grid
// retries it; a blob already gone answers 200 (a prior delivery finished it).
func (tw *Twin) replay(ctx context.Context, name string) (bool, int, string, error) {
	tw.st.Totals.Triggers++
	if tw.beforeReplay != nil {
		tw.beforeReplay(ctx, name)
	}
	pub := &publisher{tw: tw, from: rules.ParseBlobName(name).Subscription}
	h, err := estate.Handle(ctx, tw.c, tw.cfg, name, pub)
	run := Run{At: tw.st.Now, Blob: name, Published: h.Published, Archived: h.Archived, Deleted: h.Deleted, Missing: h.Missing}
	if h.Quarantined {
		run.Quarantine = h.Preview.QuarantineName
	}
	if h.Ignored {
		tw.violate("the replay function was triggered by its own copy %s (the trigger's filter must exclude it)", name)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, 0, "", ctx.Err()
		}
		// The function threw: a payload nested too deep (a crash, counted), or a failed write (retried all the same).
		if h.Preview.Crash != nil {
			run.Crashed = true
			tw.st.Totals.Crashed++
		}
		tw.remember(run)
		return false, 500, "InternalServerError", nil
	}
	if h.Missing {
		tw.remember(run)
		return true, 200, "", nil
	}
	tw.st.Totals.Replayed++
	tw.st.Totals.Republished += h.Published
	if tw.st.StartHandled[name] {
		tw.st.Totals.RepublishedTwice += h.Published
		delete(tw.st.StartHandled, name)
	}
	if h.Quarantined {
		tw.st.Totals.Quarantined += quarantinedEvents(h.Preview)
	}
	if h.Archived {
		tw.st.Totals.Archived++
	}
	if h.Deleted {
		// The original goes only after every copy the plan names has landed.
		for _, copyName := range []string{run.Quarantine, archiveIf(h)} {
			if copyName == "" {
				continue
			}
			if _, err := tw.dir.Stat(ctx, copyName); err != nil {
				tw.violate("%s was deleted before its copy %s landed", name, copyName)
			}
		}
	}
	tw.remember(run)
	return true, 200, "", nil
}

func archiveIf(h estate.Handled) string {
	if h.Archived {
		return h.Preview.ArchiveName
	}
	return ""
}

func quarantinedEvents(pv rules.Preview) int {
	var evs []json.RawMessage
	if json.Unmarshal(pv.QuarantineBody, &evs) == nil {
		return len(evs)
	}
	return 1 // a malformed payload, quarantined whole
}

func (tw *Twin) remember(r Run) {
	tw.st.Runs = append(tw.st.Runs, r)
	if len(tw.st.Runs) > maxRuns {
		tw.st.Runs = tw.st.Runs[len(tw.st.Runs)-maxRuns:]
	}
}

func (tw *Twin) violate(format string, args ...any) {
	tw.st.Violations = append(tw.st.Violations, tw.st.Now.Format(time.RFC3339)+": "+fmt.Sprintf(format, args...))
}

// publisher is the application topic as the replay function publishes to it: each republished event goes back
// to its subscription's delivery, one attempt further on. From is the subscription of the blob being replayed: an
// event type no subscription of the script names (a twin of a container knows its subscriptions by their dead
// letters, not their filters) goes back to it.
type publisher struct {
	tw   *Twin
	from string
}

func (p *publisher) Publish(ctx context.Context, events []json.RawMessage) error {
	tw := p.tw
	for _, raw := range events {
		var ev event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("the topic refused an event: %w", err)
		}
		if a := rules.ParseID(ev.ID, tw.cfg.Separator).Attempt; a.AtLeast(tw.cfg.MaxReplays + 1) {
			tw.violate("event %s was republished past the cap (%d)", ev.ID, tw.cfg.MaxReplays)
		}
		sub := tw.subOf(ev.EventType)
		if sub == "" {
			sub, _ = tw.script.Who(p.from)
		}
		if sub == "" || sub == ReplayFunction {
			return fmt.Errorf("the topic has no subscription for %s", ev.EventType)
		}
		ev.Metadata = "1"
		if ev.EventTime == "" {
			// The replay sends {data, dataVersion, eventType, id, subject}: the publisher client stamps an event
			// without an eventTime with the time it sends it, as Event Grid's SDKs do.
			ev.EventTime = tw.st.Now.UTC().Format(time.RFC3339)
		}
		tw.enqueue(sub, &ev, false)
	}
	return nil
}

// subOf is the subscription an event type goes to.
func (tw *Twin) subOf(eventType string) string {
	for _, s := range tw.script.Subs {
		if s.EventType != "" && s.EventType == eventType && !s.System {
			return s.Name
		}
	}
	return ""
}

// nextExpiry is when the lifecycle rule next deletes a blob: the oldest known blob's (the rule's time grows with
// Last-Modified).
func (tw *Twin) nextExpiry() (time.Time, bool) {
	lm, ok := tw.st.known.oldest()
	if !ok {
		return time.Time{}, false
	}
	return tw.cfg.ExpiresAt(lm), true
}

// lifecycle is the container's lifecycle rule (replay.Config.Retention): every blob past it since its last
// modification is deleted.
// The events of a dead letter or a quarantine copy it deletes are lost, unless they are on their way or in
// another blob still.
func (tw *Twin) lifecycle(ctx context.Context) error {
	doomed := tw.st.known.modifiedBy(func(lm time.Time) bool { return !tw.cfg.ExpiresAt(lm).After(tw.st.Now) })
	var ids []string
	for _, name := range doomed {
		if b, err := tw.dir.Read(ctx, name, store.MaxBlobBytes); err == nil && !isArchived(name) {
			ids = append(ids, eventIDs(b.Body, tw.cfg.Separator)...)
		}
		if err := tw.c.Delete(ctx, name, ""); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		tw.st.Totals.LifecycleDeleted++
	}
	if len(ids) == 0 {
		return nil
	}
	where, err := tw.whereabouts(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if tw.outstanding(id) && !where.somewhere(id) {
			tw.lose(id)
		}
	}
	return nil
}

// isArchived is the replay's own prefix rule (the archived pane), not a restatement of it.
func isArchived(name string) bool {
	return rules.DefaultConfig().Classify(name, 0) == rules.PaneArchived
}

// eventIDs are the original ids of the events a blob holds, read leniently (a payload the schema refuses still
// names its events).
func eventIDs(body []byte, sep string) []string {
	ids := rawEventIDs(body)
	for i, id := range ids {
		ids[i] = eventKey(id, sep)
	}
	return ids
}

// rawEventIDs are the ids of a payload's events as they stand, counts kept.
func rawEventIDs(body []byte) []string {
	var evs []struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(body, &evs) != nil {
		return nil
	}
	var out []string
	for _, e := range evs {
		if id, ok := e.ID.(string); ok {
			out = append(out, id)
		}
	}
	return out
}
