package rules_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/replay/rules"
)

func ev(id, typ string, extra string) string {
	return fmt.Sprintf(`{"id":%q,"subject":"/s","eventType":%q,"dataVersion":"1","data":{"k":"v"},"deadLetterReason":"MaxDeliveryAttemptsExceeded"%s}`, id, typ, extra)
}

func TestPlanPartitions(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	body := "[" + strings.Join([]string{ev("a", "Push", ""), ev("b|2", "Push", ""), ev("c|1", "Webhook", ""), ev("d", "Microsoft.Storage.BlobCreated", ""), ev("e|1", "Push", "")}, ",") + "]"
	pv := c.Plan("S/2026/1/1/1/g.json", []byte(body), rules.ParsePayload([]byte(body)))
	if len(pv.Republish) != 2 || pv.Republish[0].ID != "a|1" || pv.Republish[1].ID != "e|2" {
		t.Fatalf("republish = %+v", pv.Republish)
	}
	if len(pv.Quarantine) != 3 || pv.QuarantineName != "quarantine/S/2026/1/1/1/g.json" || pv.ArchiveName != "archived/S/2026/1/1/1/g.json" || !pv.DeleteOriginal {
		t.Fatalf("preview = %+v", pv)
	}
	// The quarantine copy: raw objects, diagnostics kept, ids stripped of their count.
	var q []map[string]any
	if err := json.Unmarshal(pv.QuarantineBody, &q); err != nil {
		t.Fatal(err)
	}
	if q[0]["id"] != "b" || q[1]["id"] != "c" || q[2]["id"] != "d" || q[0]["deadLetterReason"] != "MaxDeliveryAttemptsExceeded" {
		t.Fatalf("quarantine body = %s", pv.QuarantineBody)
	}
	// What is republished carries the five fields only.
	var pub map[string]any
	json.Unmarshal(pv.Republish[0].Body, &pub)
	if len(pub) != 5 || pub["id"] != "a|1" || pub["deadLetterReason"] != nil {
		t.Fatalf("publish body = %s", pv.Republish[0].Body)
	}
	if !strings.HasPrefix(string(pv.Republish[0].Body), `{"data":{"k":"v"},"dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`) {
		t.Fatalf("publish body order = %s", pv.Republish[0].Body)
	}
}

func TestPlanNothingReplayableDeletesWithoutArchive(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	body := "[" + ev("a", "Webhook", "") + "]"
	pv := c.Plan("S/g.json", []byte(body), rules.ParsePayload([]byte(body)))
	if pv.ArchiveName != "" || pv.QuarantineName == "" || len(pv.PublishRequests) != 0 || !pv.DeleteOriginal {
		t.Fatalf("%+v", pv)
	}
}

func TestPlanMalformedQuarantinesRawBytes(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	body := []byte(`[{"id":`)
	pv := c.Plan("S/g.json", body, rules.ParsePayload(body))
	if !pv.Malformed || string(pv.QuarantineBody) != string(body) || pv.QuarantineName != "quarantine/S/g.json" || pv.ArchiveName != "" {
		t.Fatalf("%+v", pv)
	}
}

// Chunking by the event count (many tiny events) and by bytes (few large ones), and a single oversized event
// going alone.
func TestChunking(t *testing.T) {
	t.Parallel()
	mk := func(n, size int) []rules.Republished {
		out := make([]rules.Republished, n)
		for i := range out {
			out[i] = rules.Republished{Body: make([]byte, size)}
		}
		return out
	}
	check := func(name string, reqs []rules.PublishRequest, want []int) {
		t.Helper()
		if len(reqs) != len(want) {
			t.Fatalf("%s: %d requests %+v, want %v", name, len(reqs), reqs, want)
		}
		for i, r := range reqs {
			if r.Events != want[i] || r.Bytes > rules.MaxPublishBytes && r.Events > 1 {
				t.Fatalf("%s: request %d = %+v, want %d events", name, i, r, want[i])
			}
		}
	}
	check("count", rules.Chunk(mk(12001, 20)), []int{5000, 5000, 2001})
	// 1 + 10*(52428+1) = 524291 > 524288, so the tenth event starts a new request.
	check("bytes", rules.Chunk(mk(10, 52428)), []int{9, 1})
	check("exact", rules.Chunk(mk(2, (rules.MaxPublishBytes-1)/2-1)), []int{2})
	check("oversized alone", rules.Chunk(append(mk(1, 10), append(mk(1, rules.MaxPublishBytes*2), mk(1, 10)...)...)), []int{1, 1, 1})
	if r := rules.Chunk(mk(3, 9)); r[0].Bytes != 1+3*10 {
		t.Fatalf("bytes = %d, want 31", r[0].Bytes)
	}
}

func TestPlanRestore(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	now := time.Date(2026, 11, 30, 3, 4, 5, 0, time.UTC)
	body := "[" + strings.Join([]string{ev("a", "Push", ""), ev("b|2", "Push", ""), ev("c", "Webhook", ""), ev("d", "Nope", "")}, ",") + "]"
	rp := c.PlanRestore("quarantine/S/2026/1/1/1/g.json", []byte(body), rules.ParsePayload([]byte(body)), now)
	if rp.Target != "S/2026/1/1/1/g.restored-20261130T030405Z.json" || len(rp.Resume) != 2 || len(rp.Requarantine) != 2 || rp.Stripped != 1 || rp.Refused() {
		t.Fatalf("%+v", rp)
	}
	p := rules.ParsePayload(rp.Body)
	for _, e := range p.Events {
		if rules.ParseID(e.ID, "|").Original != e.ID {
			t.Fatalf("restored copy keeps a count: %q", e.ID)
		}
	}
	only := "[" + ev("c", "Webhook", "") + "]"
	if rp := c.PlanRestore("quarantine/x.json", []byte(only), rules.ParsePayload([]byte(only)), now); rp.Refusal.Kind != rules.ReasonNothingResumes {
		t.Fatalf("refusal = %+v", rp.Refusal)
	}
	if rp := c.PlanRestore("quarantine/x", []byte(`{`), rules.ParsePayload([]byte(`{`)), now); !rp.Malformed || rp.Refusal.Kind != rules.ReasonMalformed || rp.Target != "x.restored-20261130T030405Z" {
		t.Fatalf("malformed: %+v", rp)
	}
	if _, err := rules.RestoreTarget("quarantine/archived/x.json", now); err == nil {
		t.Fatal("a restore must land at the root")
	}
	// A restored name (26 characters longer) the replay could not copy under quarantine/ is refused up front, not
	// left to fail at the write; one character less fits. Length is in characters, as Azure counts it.
	for _, tc := range []struct {
		dir  string
		fits bool
	}{{strings.Repeat("é", 1024-11-26-len("/x.json")), true}, {strings.Repeat("é", 1024-11-26-len("/x.json")+1), false}} {
		q := "quarantine/" + tc.dir + "/x.json"
		rp := c.PlanRestore(q, []byte(only), rules.ParsePayload([]byte(only)), now)
		if tc.fits != (rp.Target != "") || !tc.fits && rp.Refusal.Kind != rules.ReasonNoTarget {
			t.Fatalf("%d characters: %+v", len([]rune(q)), rp)
		}
	}
	if got := rules.AlternateTarget("a.restored-1.json", 2); got != "a.restored-1-2.json" {
		t.Fatal(got)
	}
}
