package rules

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deadletter/deadletter/internal/blob"
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
func (a Ack) Covers(bi blob.Info, now time.Time) bool {
	return now.Before(a.Until) && a.ETag == strings.Trim(bi.ETag, `"`)
}

// DefaultMaxAck is the longest an acknowledgement may last unless the operator lowers it: long enough for a week of
// an incident, short enough that a forgotten ack does not silence a container for good.
const DefaultMaxAck = 7 * 24 * time.Hour

// ackClockSkew is how far in the future an ack's start may lie (clocks of the machines that write acks differ).
const ackClockSkew = 10 * time.Minute

// AckLimit is the longest ack the configuration accepts: Config.MaxAck (DefaultMaxAck when unset), never past
// the retention — an ack outliving its blob silences nothing but a lie.
func (c Config) AckLimit() time.Duration {
	m := c.MaxAck
	if m <= 0 {
		m = DefaultMaxAck
	}
	if c.Retention > 0 {
		m = min(m, c.Retention)
	}
	return m
}

// AckState is what a blob's ack tags amount to.
type AckState uint8

// The states of an ack.
const (
	// AckNone: no ack tags.
	AckNone AckState = iota
	// AckActive: a well-formed ack of the blob as it is now, not yet run out: it silences the blob.
	AckActive
	// AckEnded: well-formed, but run out or of an earlier version of the blob.
	AckEnded
	// AckSuspicious: tags that deadletter did not write as they are — values outside its grammar, an ack longer
	// than the maximum or dated in the future. Ignored, and reported.
	AckSuspicious
)

// AckOf reads the ack a blob's tags carry and judges it at the service time now: a forged or broken ack is
// AckSuspicious (why says how) and silences nothing.
func (c Config) AckOf(bi blob.Info, now time.Time) (a Ack, st AckState, why string) {
	if !hasAckTags(bi.Tags) {
		return Ack{}, AckNone, ""
	}
	a, why = parseAck(bi.Tags)
	switch {
	case why != "":
		return a, AckSuspicious, why
	case a.Until.Sub(a.At) > c.AckLimit():
		return a, AckSuspicious, fmt.Sprintf("it lasts %s, longer than the %s an acknowledgement may (--max-ack)", AckSpan(a.Until.Sub(a.At)), AckSpan(c.AckLimit()))
	case a.At.After(now.Add(ackClockSkew)):
		return a, AckSuspicious, "it is dated in the future (" + a.At.UTC().Format(time.RFC3339) + ")"
	case a.Until.Sub(now) > c.AckLimit():
		return a, AckSuspicious, fmt.Sprintf("it runs until %s, more than %s from now", a.Until.UTC().Format(time.RFC3339), AckSpan(c.AckLimit()))
	case a.Covers(bi, now):
		return a, AckActive, ""
	}
	return a, AckEnded, ""
}

// AckSpan says how long an ack lasts, in days when it is whole days.
func AckSpan(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.Round(time.Minute).String()
}

func hasAckTags(tags map[string]string) bool {
	for _, k := range ackTags {
		if _, ok := tags[k]; ok {
			return true
		}
	}
	return false
}

var ackTags = [...]string{tagAckBy, tagAckAt, tagAckUntil, tagAckNote, tagAckETag}

// parseAck reads ack tags in the grammar Ack.tags writes: by and note base64url of at most maxAckText bytes of
// UTF-8, times in RFC 3339 (UTC), until after at, an ETag of printable characters without quotes. It says why when
// they are not that.
func parseAck(tags map[string]string) (Ack, string) {
	var a Ack
	for _, k := range [...]string{tagAckBy, tagAckAt, tagAckUntil, tagAckETag} {
		if _, ok := tags[k]; !ok {
			return a, "the tag " + k + " is missing"
		}
	}
	var ok bool
	if a.By, ok = unb64(tags[tagAckBy]); !ok || a.By == "" {
		return a, "its " + tagAckBy + " is not the text deadletter writes"
	}
	if n, has := tags[tagAckNote]; has {
		if a.Note, ok = unb64(n); !ok {
			return a, "its " + tagAckNote + " is not the text deadletter writes"
		}
	}
	var err error
	if a.At, err = time.Parse(time.RFC3339, tags[tagAckAt]); err != nil {
		return a, "its " + tagAckAt + " is not a time"
	}
	if a.Until, err = time.Parse(time.RFC3339, tags[tagAckUntil]); err != nil {
		return a, "its " + tagAckUntil + " is not a time"
	}
	if !a.Until.After(a.At) {
		return a, "it ends before it starts"
	}
	a.ETag = tags[tagAckETag]
	if a.ETag == "" || len(a.ETag) > 200 || strings.ContainsAny(a.ETag, "\"\\") || !printableASCII(a.ETag) {
		return a, "its " + tagAckETag + " is not an ETag"
	}
	return a, ""
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// unb64 decodes a text tag: base64url of at most maxAckText bytes of valid UTF-8.
func unb64(s string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > maxAckText || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
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

// Tags is the blob's tag set with this ack in it (other tags kept: Set Blob Tags replaces the whole set).
func (a Ack) Tags(old map[string]string) map[string]string {
	t := WithoutAck(old)
	t[tagAckBy] = base64.RawURLEncoding.EncodeToString([]byte(clip(a.By)))
	t[tagAckAt] = a.At.UTC().Format(time.RFC3339)
	t[tagAckUntil] = a.Until.UTC().Format(time.RFC3339)
	t[tagAckETag] = a.ETag
	if a.Note != "" {
		t[tagAckNote] = base64.RawURLEncoding.EncodeToString([]byte(clip(a.Note)))
	}
	return t
}

// WithoutAck is the blob's tag set with any ack taken off (other tags kept).
func WithoutAck(old map[string]string) map[string]string {
	t := maps.Clone(old)
	if t == nil {
		t = map[string]string{}
	}
	for _, k := range [...]string{tagAckBy, tagAckAt, tagAckUntil, tagAckNote, tagAckETag} {
		delete(t, k)
	}
	return t
}

// AckPreview is an acknowledgement (or its clearing) before it is written.
type AckPreview struct {
	// Targets are the blobs it writes tags on, as listed (each write is If-Match their ETag).
	Targets []blob.Info
	// Clear: every target is acknowledged already, so the action clears the acks.
	Clear bool
	// Expiring are the targets the lifecycle rule is about to delete: an ack does not silence that.
	Expiring []Expiring
	// Left are the blobs given that an ack means nothing for (the replay's archived/ records).
	Left []Result
}

// Expiring is a blob close to lifecycle deletion.
type Expiring struct {
	Name      string
	DeletesIn time.Duration
}

// PreviewAck is what acknowledging the given blobs at the service time now would do.
func (c Config) PreviewAck(items []Item, now time.Time) AckPreview {
	var p AckPreview
	allAcked := true
	for i := range items {
		it := &items[i]
		if it.Pane == PaneArchived {
			p.Left = append(p.Left, Result{Name: it.Name, Outcome: OutcomeExcluded, Reason: Reason{Kind: ReasonNotRoot}})
			continue
		}
		a := c.AlertsOf(it, now)
		if !a.Acked {
			allAcked = false
		}
		if a.Expiring {
			p.Expiring = append(p.Expiring, Expiring{Name: it.Name, DeletesIn: a.DeletesIn})
		}
		p.Targets = append(p.Targets, it.Info)
	}
	p.Clear = allAcked && len(p.Targets) > 0
	return p
}
