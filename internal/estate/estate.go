// Package estate is the estate's ReplayDeadLetterEvent function as executable Go, for tests: it follows the same
// replay.Plan that show predicts — quarantine copy first (If-None-Match "*"), then the sequential republish
// (fatal on error, so Event Grid would redeliver), then the best-effort archive and delete — so a test can prove
// that what deadletter predicts is what the estate does, and the soak can run the whole cycle. Every byte it
// writes or publishes is the Plan's, which is what the estate's JSON.stringify writes; a payload nested past
// what JSON.stringify can serialize makes it throw, as the estate does, before anything is written or deleted.
package estate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Publisher is the Event Grid publisher the replay function republishes through.
type Publisher interface {
	// Publish sends one request of serialized events.
	Publish(ctx context.Context, events []json.RawMessage) error
}

// Handled is what one run of the replay function did.
type Handled struct {
	// Ignored is set when the blob is one of the replay's own copies (the handler's prefix guard).
	Ignored bool
	// Missing is set when the blob was gone: a prior delivery already finished it.
	Missing       bool
	Preview       rules.Preview
	Quarantined   bool
	Published     int
	Archived      bool
	Deleted       bool
	BestEffortErr error
}

// Handle runs the replay function once over the blob name, as one Event Grid delivery would.
func Handle(ctx context.Context, c store.Container, cfg rules.Config, name string, pub Publisher) (Handled, error) {
	var h Handled
	if !rules.IsRoot(name) {
		h.Ignored = true
		return h, nil
	}
	if cfg.Handlers == nil {
		return h, errors.New("the replay function needs the handler register")
	}
	b, err := c.Read(ctx, name, store.MaxBlobBytes)
	if errors.Is(err, store.ErrNotFound) {
		h.Missing = true
		return h, nil
	}
	if err != nil {
		return h, err
	}
	h.Preview = cfg.Plan(name, b.Body, rules.ParsePayload(b.Body))
	pv := h.Preview
	crashed := func() error {
		// JSON.stringify overflows Node's stack: the function throws, and every redelivery throws again.
		return fmt.Errorf("ReplayDeadLetterEvent failed: RangeError: Maximum call stack size exceeded (a value nested %d levels deep)", pv.Crash.Depth)
	}
	if pv.Crash != nil && pv.Crash.Stage == rules.StageQuarantine {
		return h, crashed() // serializing the quarantine copy: before anything is written
	}
	// The quarantine copy is the Plan's body: the refused elements as JSON.stringify writes them (or a malformed
	// payload's raw bytes).
	if pv.QuarantineName != "" {
		_, err := c.Write(ctx, pv.QuarantineName, pv.QuarantineBody, store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json"})
		if err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return h, err
		}
		h.Quarantined = true
	}
	if pv.Crash != nil {
		return h, crashed() // serializing a republished event: after the quarantine copy, before any publish
	}
	if len(pv.Republish) == 0 {
		if err := c.Delete(ctx, name, b.ETag); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return h, err
		}
		h.Deleted = true
		return h, nil
	}
	for _, req := range pv.PublishRequests {
		batch := make([]json.RawMessage, 0, req.Events)
		for _, e := range pv.Republish[req.First : req.Last+1] {
			batch = append(batch, e.Body)
		}
		if err := pub.Publish(ctx, batch); err != nil {
			return h, fmt.Errorf("ReplayDeadLetterEvent failed: %w", err)
		}
		h.Published += len(batch)
	}
	if _, err := c.Write(ctx, pv.ArchiveName, b.Body, store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json"}); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		h.BestEffortErr = err
		return h, nil
	}
	h.Archived = true
	if err := c.Delete(ctx, name, b.ETag); err != nil {
		h.BestEffortErr = err
		return h, nil
	}
	h.Deleted = true
	return h, nil
}
