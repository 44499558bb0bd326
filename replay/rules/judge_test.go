package rules_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"
)

// The judgement (docs/estate.md, "The judgement"), in order, with every failed bar reported.
func TestJudge(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	cases := []struct {
		id, typ string
		want    []rules.Verdict
	}{
		{"a", "Push", []rules.Verdict{rules.VerdictReplay}},
		{"a|1", "Push", []rules.Verdict{rules.VerdictReplay}},
		{"a|2", "Push", []rules.Verdict{rules.VerdictCap}},
		{"a|99999999999999999999", "Push", []rules.Verdict{rules.VerdictCap}},
		{"a", "Microsoft.Storage.BlobCreated", []rules.Verdict{rules.VerdictUnroutable}},
		{"a", "Webhook", []rules.Verdict{rules.VerdictNotIdempotent}},
		{"a|5", "Webhook", []rules.Verdict{rules.VerdictCap, rules.VerdictNotIdempotent}},
		{"a|5", "Nope", []rules.Verdict{rules.VerdictCap, rules.VerdictUnroutable}},
		{"a\n|9", "Push", []rules.Verdict{rules.VerdictReplay}}, // uncountable: the cap never stops it
	}
	for _, tc := range cases {
		if got := c.Judge(tc.id, tc.typ).Verdicts.List(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Judge(%q, %q) = %v, want %v", tc.id, tc.typ, got, tc.want)
		}
	}
	noReg := rulestest.ConfigWith(nil)
	if got := noReg.Judge("a", "Push").Verdicts.List(); !reflect.DeepEqual(got, []rules.Verdict{rules.VerdictUnknown}) {
		t.Errorf("no register: %v", got)
	}
	if got := noReg.Judge("a|3", "Push").Verdicts.List(); !reflect.DeepEqual(got, []rules.Verdict{rules.VerdictCap, rules.VerdictUnknown}) {
		t.Errorf("no register, capped: %v", got)
	}
	zero := rulestest.ConfigWith(rulestest.Register())
	zero.MaxReplays = 0
	if got := zero.Judge("a", "Push").Primary(); got != rules.VerdictCap {
		t.Errorf("cap 0 stops everything: %v", got)
	}
}

func TestQuarantineReason(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	for _, tc := range []struct {
		id, typ string
		want    rules.Verdict
	}{
		{"a", "Push", rules.VerdictCap}, // inferred: nothing else would have stopped it
		{"a|2", "Push", rules.VerdictCap},
		{"a", "Webhook", rules.VerdictNotIdempotent},
		{"a", "Microsoft.Storage.BlobCreated", rules.VerdictUnroutable},
	} {
		if got := c.QuarantineReason(tc.id, tc.typ); got != tc.want {
			t.Errorf("QuarantineReason(%q, %q) = %v, want %v", tc.id, tc.typ, got, tc.want)
		}
	}
}

func TestParseRegister(t *testing.T) {
	t.Parallel()
	reg, err := rules.ParseRegister([]byte(`{"Push": true, "Webhook": false}`))
	if err != nil || !reflect.DeepEqual(reg, rulestest.Register()) {
		t.Fatalf("%v %v", reg, err)
	}
	for body, want := range map[string]string{
		`[]`:              "want a JSON object",
		`null`:            "got null",
		`{"Push": "yes"}`: `"Push" is a string, want true`,
		`{"Push": 1}`:     `"Push" is a number`,
		`{"Push": true`:   "JSON syntax error",
	} {
		if _, err := rules.ParseRegister([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRegister(%s) = %v, want %q", body, err, want)
		}
	} // Read as JSON.parse reads it: the last duplicate wins, and a lone surrogate key matches the eventType that
	// carries the same lone surrogate (not U+FFFD, as Go's decoder would make of both).
	reg, err = rules.ParseRegister([]byte(`{"Push": false, "Push": true, "\ud800": true}`))
	if err != nil || !reg["Push"] || len(reg) != 2 {
		t.Fatalf("%v %v", reg, err)
	}
	c := rulestest.ConfigWith(reg)
	lone := `[{"id":"a","subject":"s","eventType":"\ud800","dataVersion":"1","data":null}]`
	if pv := c.Plan("S/a.json", []byte(lone), rules.ParsePayload([]byte(lone))); len(pv.Republish) != 1 {
		t.Fatalf("the lone-surrogate eventType is in the register: %+v", pv)
	}
	fffd := `[{"id":"a","subject":"s","eventType":"\ufffd","dataVersion":"1","data":null}]`
	if pv := c.Plan("S/a.json", []byte(fffd), rules.ParsePayload([]byte(fffd))); len(pv.Republish) != 0 {
		t.Fatalf("U+FFFD is not in the register: %+v", pv)
	}
}

// The pane table (docs/estate.md), with the exact, case-sensitive prefixes of the replay's guard.
func TestClassify(t *testing.T) {
	t.Parallel()
	c := rules.DefaultConfig()
	for _, tc := range []struct {
		name string
		age  time.Duration
		want rules.Pane
	}{
		{"archived/S/2026/1/1/1/g.json", 90 * time.Hour, rules.PaneArchived},
		{"archived/x", 0, rules.PaneArchived},
		{"quarantine/S/2026/1/1/1/g.json", 0, rules.PaneQuarantine},
		{"S/2026/1/1/1/g.json", 59 * time.Minute, rules.PaneLive},
		{"S/2026/1/1/1/g.json", 60 * time.Minute, rules.PaneStranded},
		{"S/2026/1/1/1/g.json", 61 * time.Minute, rules.PaneStranded},
		{"Archived/x", 2 * time.Hour, rules.PaneStranded},
		{"archivedX/y", 2 * time.Hour, rules.PaneStranded},
		{"archived", 2 * time.Hour, rules.PaneStranded},
		{"quarantine", 0, rules.PaneLive},
		{"QUARANTINE/x", 0, rules.PaneLive},
		{"S/x", -time.Minute, rules.PaneLive}, // Last-Modified ahead of the service clock
	} {
		if got := c.Classify(tc.name, tc.age); got != tc.want {
			t.Errorf("Classify(%q, %s) = %s, want %s", tc.name, tc.age, got, tc.want)
		}
	}
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	stalled := func(name string, age time.Duration) bool {
		it := c.MakeItem(blob.Info{Name: name, LastModified: now.Add(-age)}, now)
		return c.AlertsOf(&it, now).Stalled
	}
	if !stalled("S/x", 11*time.Minute) || stalled("S/x", 9*time.Minute) || stalled("S/x", 2*time.Hour) || stalled("quarantine/x", 20*time.Minute) {
		t.Error("Stalled: a live blob past the grace and only that")
	}
	lm := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := c.ExpiresAt(lm); !got.Equal(lm.Add(30 * 24 * time.Hour)) {
		t.Errorf("ExpiresAt = %s", got)
	}
}

func TestBlobNames(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	n := rules.DeadLetterName("push-notifications", at, "g")
	if n != "PUSH-NOTIFICATIONS/2026/3/4/5/g.json" {
		t.Fatalf("DeadLetterName = %q", n)
	}
	for _, name := range []string{n, rules.ArchivedPrefix + n, rules.QuarantinePrefix + n} {
		bn := rules.ParseBlobName(name)
		if bn.Subscription != "PUSH-NOTIFICATIONS" || !bn.Hour().Equal(time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)) {
			t.Errorf("ParseBlobName(%q) = %+v", name, bn)
		}
	}
	if bn := rules.ParseBlobName("odd/name"); bn.Subscription != "odd" || !bn.Hour().IsZero() {
		t.Errorf("odd name: %+v", bn)
	}
}

// A repair's plan holds every forceable reason that applies — --force lifts them all, so none may go unsaid: an
// unchanged payload of a live original is both.
func TestARepairPlanSaysEveryReasonForceLifts(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	body := []byte(`[{"id":"a","subject":"/s","eventType":"Webhook","dataVersion":"1","data":{}}]`)
	rp := rules.RepairPlan{Original: &rules.Original{Name: "WEBHOOKS/2026/12/2/9/x.json", Body: body, Live: true}, Body: body}
	rp.Judge(c, "WEBHOOKS/2026/12/2/9/x.json")
	var kinds []rules.ReasonKind
	for _, r := range append([]rules.Reason{rp.Refusal}, rp.Also...) {
		kinds = append(kinds, r.Kind)
	}
	if want := []rules.ReasonKind{rules.ReasonUnchanged, rules.ReasonStillQuarantined, rules.ReasonLiveOriginal}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("reasons %v, want %v", kinds, want)
	}
}
