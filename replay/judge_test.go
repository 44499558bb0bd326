package replay

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var testRegister = Register{"Push": true, "Webhook": false}

func cfgWith(reg Register) Config {
	c := DefaultConfig()
	c.Handlers = reg
	return c
}

// SPEC §3's judgement, in order, with every failed bar reported.
func TestJudge(t *testing.T) {
	c := cfgWith(testRegister)
	cases := []struct {
		id, typ string
		want    []Verdict
	}{
		{"a", "Push", []Verdict{VerdictReplay}},
		{"a|1", "Push", []Verdict{VerdictReplay}},
		{"a|2", "Push", []Verdict{VerdictCap}},
		{"a|99999999999999999999", "Push", []Verdict{VerdictCap}},
		{"a", "Microsoft.Storage.BlobCreated", []Verdict{VerdictUnroutable}},
		{"a", "Webhook", []Verdict{VerdictNotIdempotent}},
		{"a|5", "Webhook", []Verdict{VerdictCap, VerdictNotIdempotent}},
		{"a|5", "Nope", []Verdict{VerdictCap, VerdictUnroutable}},
		{"a\n|9", "Push", []Verdict{VerdictReplay}}, // uncountable: the cap never stops it
	}
	for _, tc := range cases {
		if got := c.Judge(tc.id, tc.typ).Verdicts; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Judge(%q, %q) = %v, want %v", tc.id, tc.typ, got, tc.want)
		}
	}
	noReg := cfgWith(nil)
	if got := noReg.Judge("a", "Push").Verdicts; !reflect.DeepEqual(got, []Verdict{VerdictUnknown}) {
		t.Errorf("no register: %v", got)
	}
	if got := noReg.Judge("a|3", "Push").Verdicts; !reflect.DeepEqual(got, []Verdict{VerdictCap, VerdictUnknown}) {
		t.Errorf("no register, capped: %v", got)
	}
	zero := cfgWith(testRegister)
	zero.MaxReplays = 0
	if got := zero.Judge("a", "Push").Primary(); got != VerdictCap {
		t.Errorf("cap 0 stops everything: %v", got)
	}
}

func TestQuarantineReason(t *testing.T) {
	c := cfgWith(testRegister)
	for _, tc := range []struct {
		id, typ string
		want    Verdict
	}{
		{"a", "Push", VerdictCap}, // inferred: nothing else would have stopped it
		{"a|2", "Push", VerdictCap},
		{"a", "Webhook", VerdictNotIdempotent},
		{"a", "Microsoft.Storage.BlobCreated", VerdictUnroutable},
	} {
		if got := c.QuarantineReason(tc.id, tc.typ); got != tc.want {
			t.Errorf("QuarantineReason(%q, %q) = %v, want %v", tc.id, tc.typ, got, tc.want)
		}
	}
}

func TestParseRegister(t *testing.T) {
	reg, err := ParseRegister([]byte(`{"Push": true, "Webhook": false}`))
	if err != nil || !reflect.DeepEqual(reg, testRegister) {
		t.Fatalf("%v %v", reg, err)
	}
	for body, want := range map[string]string{
		`[]`:              "want a JSON object",
		`null`:            "got null",
		`{"Push": "yes"}`: `"Push" is a string, want true`,
		`{"Push": 1}`:     `"Push" is a number`,
		`{"Push": true`:   "JSON syntax error",
	} {
		if _, err := ParseRegister([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRegister(%s) = %v, want %q", body, err, want)
		}
	}
}

// SPEC §2's pane table, with the exact, case-sensitive prefixes of §1.
func TestClassify(t *testing.T) {
	c := DefaultConfig()
	for _, tc := range []struct {
		name string
		age  time.Duration
		want Pane
	}{
		{"archived/S/2026/1/1/1/g.json", 90 * time.Hour, PaneArchived},
		{"archived/x", 0, PaneArchived},
		{"quarantine/S/2026/1/1/1/g.json", 0, PaneQuarantine},
		{"S/2026/1/1/1/g.json", 59 * time.Minute, PaneLive},
		{"S/2026/1/1/1/g.json", 60 * time.Minute, PaneStranded},
		{"S/2026/1/1/1/g.json", 61 * time.Minute, PaneStranded},
		{"Archived/x", 2 * time.Hour, PaneStranded},
		{"archivedX/y", 2 * time.Hour, PaneStranded},
		{"archived", 2 * time.Hour, PaneStranded},
		{"quarantine", 0, PaneLive},
		{"QUARANTINE/x", 0, PaneLive},
		{"S/x", -time.Minute, PaneLive}, // Last-Modified ahead of the service clock
	} {
		if got := c.Classify(tc.name, tc.age); got != tc.want {
			t.Errorf("Classify(%q, %s) = %s, want %s", tc.name, tc.age, got, tc.want)
		}
	}
	if !c.Stalled("S/x", 11*time.Minute) || c.Stalled("S/x", 9*time.Minute) || c.Stalled("S/x", 2*time.Hour) || c.Stalled("quarantine/x", 20*time.Minute) {
		t.Error("Stalled: a live blob past the grace and only that")
	}
	lm := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := c.ExpiresAt(lm); !got.Equal(lm.Add(30 * 24 * time.Hour)) {
		t.Errorf("ExpiresAt = %s", got)
	}
}

func TestBlobNames(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	n := DeadLetterName("push-notifications", at, "g")
	if n != "PUSH-NOTIFICATIONS/2026/3/4/5/g.json" {
		t.Fatalf("DeadLetterName = %q", n)
	}
	for _, name := range []string{n, ArchivedPrefix + n, QuarantinePrefix + n} {
		bn := ParseBlobName(name)
		if bn.Subscription != "PUSH-NOTIFICATIONS" || !bn.Hour.Equal(time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)) {
			t.Errorf("ParseBlobName(%q) = %+v", name, bn)
		}
	}
	if bn := ParseBlobName("odd/name"); bn.Subscription != "odd" || !bn.Hour.IsZero() {
		t.Errorf("odd name: %+v", bn)
	}
}
