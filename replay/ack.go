package replay

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deadletter/deadletter/store"
)

// Ack is an operator's acknowledgement of one blob: it has been seen and is being handled, so it raises no
// finding until the ack expires or the blob changes. It lives in the blob's index tags, shared by everyone who
// looks at the container, and setting it changes neither the blob's ETag nor its Last-Modified (the lifecycle
// clock).
type Ack struct {
	By    string
	At    time.Time
	Until time.Time
	Note  string
	// ETag is the version of the blob that was acknowledged: a rewrite (a drain, the replay) ends the ack.
	ETag string
}

// The index tags an ack is kept in. Tag values allow only letters, digits, space and + - . / : = _, so free text
// is base64url and the ETag loses its quotes.
const (
	tagAckBy    = "dlAckBy"
	tagAckAt    = "dlAckAt"
	tagAckUntil = "dlAckUntil"
	tagAckNote  = "dlAckNote"
	tagAckETag  = "dlAckEtag"
)

// maxAckText bounds the by and note texts so that, encoded, each fits a 256-character tag value.
const maxAckText = 180

// Covers reports whether the ack silences the blob as it is at now.
func (a Ack) Covers(bi store.BlobInfo, now time.Time) bool {
	return now.Before(a.Until) && a.ETag == strings.Trim(bi.ETag, `"`)
}

// AckOf reads the ack a blob's tags carry, if any.
func AckOf(bi store.BlobInfo) (Ack, bool) {
	until, ok := bi.Tags[tagAckUntil]
	if !ok {
		return Ack{}, false
	}
	a := Ack{By: unb64(bi.Tags[tagAckBy]), Note: unb64(bi.Tags[tagAckNote]), ETag: bi.Tags[tagAckETag]}
	a.Until, _ = time.Parse(time.RFC3339, until)
	a.At, _ = time.Parse(time.RFC3339, bi.Tags[tagAckAt])
	return a, true
}

func unb64(s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(b)
}

func clip(s string) string {
	if len(s) <= maxAckText {
		return s
	}
	s = s[:maxAckText]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// tags is the blob's tag set with this ack in it (other tags kept: Set Blob Tags replaces the whole set).
func (a Ack) tags(old map[string]string) map[string]string {
	t := withoutAck(old)
	t[tagAckBy] = base64.RawURLEncoding.EncodeToString([]byte(clip(a.By)))
	t[tagAckAt] = a.At.UTC().Format(time.RFC3339)
	t[tagAckUntil] = a.Until.UTC().Format(time.RFC3339)
	t[tagAckETag] = a.ETag
	if a.Note != "" {
		t[tagAckNote] = base64.RawURLEncoding.EncodeToString([]byte(clip(a.Note)))
	}
	return t
}

func withoutAck(old map[string]string) map[string]string {
	t := maps.Clone(old)
	if t == nil {
		t = map[string]string{}
	}
	for _, k := range [...]string{tagAckBy, tagAckAt, tagAckUntil, tagAckNote, tagAckETag} {
		delete(t, k)
	}
	return t
}

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
	// Clear removes acks instead of setting them.
	Clear    bool
	ReadOnly bool
	Progress func(Result)
}

// Acknowledge sets (or clears) the ack on each listed blob, If-Match the ETag listed: an ack is about the blob as
// the operator saw it, so one that changed since is reported changed, not silenced.
func Acknowledge(ctx context.Context, c store.Container, targets []store.BlobInfo, o AckOptions) ([]Result, error) {
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
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	r := &runner{concurrency: DefaultConcurrency, progress: o.Progress, stopAfter: -1}
	return r.run(ctx, names, func(ctx context.Context, i int) Result {
		bi := targets[i]
		res := Result{Name: bi.Name, Outcome: OutcomeAcked}
		tags := withoutAck(bi.Tags)
		if o.Clear {
			res.Outcome = OutcomeCleared
		} else {
			tags = Ack{By: o.By, At: o.Now, Until: o.Now.Add(o.For), Note: o.Note, ETag: strings.Trim(bi.ETag, `"`)}.tags(bi.Tags)
		}
		err := tg.SetTags(context.WithoutCancel(ctx), bi.Name, tags, bi.ETag)
		switch {
		case err == nil:
		case errors.Is(err, store.ErrConditionFailed):
			res.Outcome, res.Reason = OutcomeChanged, Reason{Kind: ReasonChangedSinceListed}
		default:
			res.Outcome, res.Reason = OutcomeFailed, failed(err)
		}
		return res
	}), nil
}

// DefaultAckBy is who acknowledges when nobody says: the user, and the host it was given from (user@host).
func DefaultAckBy() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return name + "@" + h
	}
	return name
}
