package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// AckOptions control an acknowledgement.
type AckOptions struct {
	// For is how long the ack holds; Now is the service time it starts at: when it is written, not when the
	// blobs were listed — a question may stay open for minutes (Snapshot.Since gives it without asking the
	// service, whose clock a SAS may not be allowed to read).
	For time.Duration
	Now time.Time
	By  string
	// Note says what is being done about it.
	Note string
	// Max is the longest ack allowed (Config.MaxAck as the command resolved it).
	Max time.Duration
	// Clear removes acks instead of setting them.
	Clear    bool
	ReadOnly bool
	Progress func(rules.Result)
}

// Acknowledge sets (or clears) the ack on each listed blob, If-Match the ETag listed: an ack is about the blob as
// the operator saw it, so one that changed since is reported changed, not silenced.
func Acknowledge(ctx context.Context, c store.Container, targets []store.BlobInfo, o AckOptions) ([]rules.Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	tg, ok := c.(store.Tagger)
	if !ok {
		return nil, fmt.Errorf("%s cannot keep acknowledgements (no index tags)", c.Describe())
	}
	if !o.Clear && o.For <= 0 {
		return nil, errors.New("an acknowledgement needs a positive duration")
	}
	if !o.Clear && o.For > o.Max {
		return nil, fmt.Errorf("an acknowledgement may last at most %s (--max-ack): asked for %s", rules.AckSpan(o.Max), rules.AckSpan(o.For))
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	r := &runner{concurrency: rules.DefaultConcurrency, progress: o.Progress, stopAfter: -1}
	return r.run(ctx, names, func(ctx context.Context, i int) rules.Result {
		bi := targets[i]
		res := rules.Result{Name: bi.Name, Outcome: rules.OutcomeAcked}
		tags := rules.WithoutAck(bi.Tags)
		if o.Clear {
			res.Outcome = rules.OutcomeCleared
		} else {
			tags = rules.Ack{By: o.By, At: o.Now, Until: o.Now.Add(o.For), Note: o.Note, ETag: strings.Trim(bi.ETag, `"`)}.Tags(bi.Tags)
		}
		wctx := context.WithoutCancel(ctx)
		err := tg.SetTags(wctx, bi.Name, tags, bi.ETag)
		if err == nil {
			err = verifyAcked(wctx, c, tg, bi, tags)
		}
		switch {
		case err == nil:
		case errors.Is(err, errAckRaced):
			res.Outcome, res.Reason = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonAckChanged}
		case errors.Is(err, store.ErrConditionFailed):
			res.Outcome, res.Reason = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonChangedSinceListed}
		default:
			res.Outcome, res.Reason = rules.OutcomeFailed, rules.Failure(err)
		}
		return res
	}), nil
}

// errAckRaced: the tags landed on a version of the blob the operator did not see.
var errAckRaced = errors.New("the blob changed while it was acknowledged")

// verifyAcked looks again after writing an ack: a service that does not hold Set Blob Tags to its If-Match
// (Azurite) may have put the tags on a blob rewritten since it was listed. Then the tags are taken off again — held
// to the blob's new ETag, so nothing newer is touched — and the ack is reported changed, not acked.
func verifyAcked(ctx context.Context, c store.Container, tg store.Tagger, was store.BlobInfo, tags map[string]string) error {
	now, err := c.Stat(ctx, was.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errAckRaced
	case err != nil:
		return nil // the write was held to the ETag; a failed look does not undo it
	case now.ETag == was.ETag:
		return nil
	}
	tg.SetTags(ctx, was.Name, rules.WithoutAck(tags), now.ETag)
	return errAckRaced
}
