package rules

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// BlobName is the parts of an Event Grid dead-letter blob name: <SUBSCRIPTION>/<Y>/<M>/<D>/<H>/<guid>.json,
// after any archived/ or quarantine/ prefix.
type BlobName struct {
	Subscription string
	// hours since the Unix epoch of the hour the name says (valid when dated): four bytes, not time.Time's 24,
	// because a snapshot holds one BlobName per listed blob.
	hours int32
	dated bool
}

// Hour is the UTC hour the blob was written in; zero when the name does not follow the pattern.
func (b BlobName) Hour() time.Time {
	if !b.dated {
		return time.Time{}
	}
	return time.Unix(int64(b.hours)*3600, 0).UTC()
}

// withHour dates a name by its hour (one the four bytes cannot hold — hundreds of thousands of years away — leaves
// it undated, like any name off the pattern).
func (b BlobName) withHour(t time.Time) BlobName {
	h := t.Unix() / 3600
	if h < math.MinInt32 || h > math.MaxInt32 {
		return b
	}
	b.hours, b.dated = int32(h), true
	return b
}

// FileOf is the last path segment of a blob name (the GUID and .json for an Event Grid name).
func FileOf(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

// ParseBlobName reads the subscription and hour out of a dead-letter blob name. Names that do not follow the
// pattern give their first segment as the subscription and no hour.
func ParseBlobName(name string) BlobName {
	name = strings.TrimPrefix(strings.TrimPrefix(name, ArchivedPrefix), QuarantinePrefix)
	parts := strings.Split(name, "/")
	bn := BlobName{Subscription: parts[0]}
	if len(parts) < 2 {
		bn.Subscription = ""
		return bn
	}
	if len(parts) != 6 {
		return bn
	}
	var n [4]int
	for i := 0; i < 4; i++ {
		v, err := strconv.Atoi(parts[1+i])
		if err != nil || v < 0 {
			return bn
		}
		n[i] = v
	}
	if n[1] < 1 || n[1] > 12 || n[2] < 1 || n[2] > 31 || n[3] > 23 {
		return bn
	}
	return bn.withHour(time.Date(n[0], time.Month(n[1]), n[2], n[3], 0, 0, 0, time.UTC))
}

// DeadLetterName is the name Event Grid gives a dead-letter blob written at t.
func DeadLetterName(subscription string, t time.Time, guid string) string {
	t = t.UTC()
	return strings.ToUpper(subscription) + "/" + strconv.Itoa(t.Year()) + "/" + strconv.Itoa(int(t.Month())) + "/" +
		strconv.Itoa(t.Day()) + "/" + strconv.Itoa(t.Hour()) + "/" + guid + ".json"
}

// Twins are the names the replay function writes its copies of a root blob under.
func Twins(root string) (archived, quarantine string) {
	return ArchivedPrefix + root, QuarantinePrefix + root
}

// RestoreTarget is the root name a restored copy gets: the quarantine name without its prefix, with
// .restored-<UTC yyyymmddThhmmssZ> before .json (appended when there is no .json). The stamp is the quarantine
// copy's Last-Modified, not the clock, so every retry and every concurrent restore of one copy computes the same
// name — which is what makes a restore idempotent.
func RestoreTarget(quarantineName string, copyModified time.Time) (string, error) {
	if !strings.HasPrefix(quarantineName, QuarantinePrefix) {
		return "", fmt.Errorf("%q is not under %s", quarantineName, QuarantinePrefix)
	}
	return stampedTarget(strings.TrimPrefix(quarantineName, QuarantinePrefix), quarantineName, "restore", "restoring", ".restored-", copyModified)
}

// RepairTarget is the root name a repaired payload gets, as RestoreTarget names a restored copy: the original's
// name without its archived/ or quarantine/ prefix, with .repaired-<the original's Last-Modified, UTC> before
// .json — the same for every retry of one repair, so a retry after a lost answer finds the copy it wrote.
func RepairTarget(original string, modified time.Time) (string, error) {
	base := strings.TrimPrefix(strings.TrimPrefix(original, ArchivedPrefix), QuarantinePrefix)
	return stampedTarget(base, original, "repair", "repairing", ".repaired-", modified)
}

// stampedTarget is base with stamp and the time before its .json: a root name that fits with the replay's
// quarantine/ copy of it.
func stampedTarget(base, from, verb, verbing, stamp string, t time.Time) (string, error) {
	if base == "" || !IsRoot(base) {
		return "", fmt.Errorf("%s %q would not land at the container root", verbing, from)
	}
	stamp += t.UTC().Format("20060102T150405Z")
	target := base + stamp
	if strings.HasSuffix(base, ".json") {
		target = strings.TrimSuffix(base, ".json") + stamp + ".json"
	}
	// The replay copies what it reads to quarantine/ or archived/ under the same name: a copy it cannot copy is
	// one it throws on, so the name must fit with the longer prefix too.
	if n := utf8.RuneCountInString(QuarantinePrefix + target); n > MaxNameLength {
		return "", fmt.Errorf("too long to %s: its new name would be %d characters and the replay's copy of it %d, over the %d a blob name may have (move it by hand under a shorter name)",
			verb, utf8.RuneCountInString(target), n, MaxNameLength)
	}
	return target, nil
}

// MaxNameLength is the longest blob name Azure Storage accepts, in characters.
const MaxNameLength = 1024

// AlternateTarget is the n-th fallback when target (or its archived/ or quarantine/ copy) already holds a
// different body.
func AlternateTarget(target string, n int) string {
	if strings.HasSuffix(target, ".json") {
		return strings.TrimSuffix(target, ".json") + "-" + strconv.Itoa(n) + ".json"
	}
	return target + "-" + strconv.Itoa(n)
}

// SubscriptionNameRule is what an Event Grid subscription name is, said to whoever gives another.
const SubscriptionNameRule = "an Event Grid subscription name is 3 to 64 letters, digits and hyphens"

// ValidSubscriptionName reports whether s can be an Event Grid subscription's name: 3 to 64 ASCII letters,
// digits and hyphens. Nothing else can have dead-lettered, so a blob is never written under any other folder
// (a space, a NUL, "..", a dotted name like .deadletter, a path).
func ValidSubscriptionName(s string) bool {
	if len(s) < 3 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
