package rules_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"
)

// A blob's events answer type:, subject:, id: and data.PATH: as Event Grid's advanced filters would: one event
// must match every positive term, values in any case, numbers as numbers, arrays by any element, a missing key
// never; a negated term leaves out a blob that holds such an event at all.
func TestQueryOnWhatIsInsideTheEvents(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	payload := `[
	 {"id":"ev-1|2","subject":"/push/u-3813","eventType":"ProcessPushNotification","dataVersion":"1","data":{"userId":"u-3813","room":{"id":"R-9"},"n":3,"tags":["vip","eu"],"on":true,"nil":null}},
	 {"id":"ev-2","subject":"/webhooks/x","eventType":"DeliverWebhook","dataVersion":"1","data":{"userId":"u-1"}}
	]`
	evs := rules.ParsePayload([]byte(payload)).Events
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"type:ProcessPushNotification", true}, {"type:pushnotif", true}, {"type:=processpushnotification", true}, {"type:=Push", false},
		{"subject:/push/", true}, {"subject:=/PUSH/U-3813", true}, {"subject:nothere", false},
		{"id:ev-1", true}, {"id:=ev-1|2", true}, {"id:=ev-1|7", true}, {"id:=ev-1", true}, {"id:=EV-2", true}, {"id:=ev", false},
		{"data.userId:=u-3813", true}, {"data.userid:=U-3813", true}, {"data.userId:381", true}, {"data.userId:=u-38", false},
		{"data.room.id:=r-9", true}, {"data.room:R-9", false}, {"data.room.id.x:r", false}, {"data.missing:x", false},
		{"data.n:=3", true}, {"data.n:=3.0", true}, {"data.n:=4", false}, {"data.tags:=eu", true}, {"data.tags:=us", false},
		{"data.on:=true", true}, {"data.nil:=null", true}, {"data:vip", true}, {"data:nowhere", false},
		// one event must match every positive term: these two hold in different events
		{"type:ProcessPushNotification data.userId:=u-1", false}, {"type:DeliverWebhook data.userId:=u-1", true},
		// a negated term: no event of the blob matches it
		{"-type:DeliverWebhook", false}, {"-type:Nothing", true}, {"type:Push -data.userId:=u-1", false},
	} {
		q, err := rules.ParseQuery(tc.q)
		if err != nil {
			t.Fatalf("%q: %v", tc.q, err)
		}
		if !q.HasEventTerms() {
			t.Errorf("%q: no event terms seen", tc.q)
		}
		if got := q.MatchesEvents(cfg, evs); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.q, got, tc.want)
		}
	}
}

// A query with event terms never matches a blob whose events were not judged — a filter does not widen to what it
// has not read — and matches one judged to, when its other words do too.
func TestAnEventQueryMatchesOnlyWhatWasJudged(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mk := func(name string) *rules.Item {
		it := cfg.MakeItem(blob.Info{Name: name, LastModified: now.Add(-time.Hour)}, now)
		return &it
	}
	a, b, c := mk("WEBHOOKS/2026/11/30/9/a.json"), mk("WEBHOOKS/2026/11/30/9/b.json"), mk("PUSH/2026/11/30/9/c.json")
	q, err := rules.ParseQuery("sub:webhooks type:X")
	if err != nil {
		t.Fatal(err)
	}
	if q.NeedsPayload() {
		t.Error("sub: and type: need no summary: the events are judged apart")
	}
	key := func(it *rules.Item) func() string { return func() string { return rules.SearchKey(it) } }
	if q.Matches(cfg, now, a, key(a)) {
		t.Error("an unjudged blob matched")
	}
	j := q.WithEvents(rules.EventMatches{a.Name: true, b.Name: false, c.Name: true})
	if !j.Matches(cfg, now, a, key(a)) || j.Matches(cfg, now, b, key(b)) || j.Matches(cfg, now, c, key(c)) {
		t.Error("judged: want only a (b judged no, c is not of WEBHOOKS)")
	}
	if !q.WithoutEvents().Matches(cfg, now, b, key(b)) || q.WithoutEvents().HasEventTerms() {
		t.Error("WithoutEvents keeps sub: alone")
	}
	if j.Judged(mk("WEBHOOKS/2026/11/30/9/d.json")) || !j.Judged(b) {
		t.Error("Judged: d was not read, b was")
	}
}

func TestEventFieldsThatDoNotParse(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"data.:x", "data..a:x", "data.a.:x", "type:", "bogus:x"} {
		if _, err := rules.ParseQuery(q); err == nil {
			t.Errorf("%q parsed", q)
		} else if q == "bogus:x" && !strings.Contains(err.Error(), "data.PATH") {
			t.Errorf("%q: the error should name the event fields: %v", q, err)
		}
	}
}
