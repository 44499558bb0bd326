package rules_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/replay/rules"
)

// The exactness rules (docs/estate.md: how exact the prediction is), each with named cases: what the estate's JavaScript (Buffer.toString,
// JSON.parse, the schema, JSON.stringify) would write, byte for byte. The expected bytes here are what Node
// prints; fidelity_node_test.go checks the same against a real node process over a few hundred payloads.

const fidelityName = "S/2026/1/1/1/g.json"

func plan(t *testing.T, body string) rules.Preview {
	t.Helper()
	p := rules.ParsePayload([]byte(body))
	if p.Malformed() {
		t.Fatalf("malformed: %v", p.Err)
	}
	return rulestest.ConfigWith(rulestest.Register()).Plan(fidelityName, []byte(body), p)
}

// event is an element of the estate's schema with the given id, eventType, data and extra members.
func event(id, typ, data, extra string) string {
	return `{"id":"` + id + `","subject":"/s","eventType":"` + typ + `","dataVersion":"1","data":` + data + extra + `}`
}

func TestFidelityNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, data, want string }{
		{"1.0 is 1", `1.0`, `1`},
		{"1E2 is 100", `1E2`, `100`},
		{"-0 is 0", `-0`, `0`},
		{"1e21 keeps an exponent", `1e21`, `1e+21`},
		{"1e20 does not", `1e20`, `100000000000000000000`},
		{"beyond double is null", `1e400`, `null`},
		{"past 2^53 rounds", `123456789012345678901`, `123456789012345680000`},
		{"small", `[0.0000001,1e-7,0.000001,-1.50e-3]`, `[1e-7,1e-7,0.000001,-0.0015]`},
		{"nested in objects", `{"a":{"b":[1.10,2E+0,-0.0]}}`, `{"a":{"b":[1.1,2,0]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv := plan(t, "["+event("a", "Push", c.data, "")+"]")
			want := `{"data":` + c.want + `,"dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`
			if string(pv.Republish[0].Body) != want {
				t.Fatalf("body %s\nwant %s", pv.Republish[0].Body, want)
			}
		})
	}
}

func TestFidelityStrings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, data, want string }{
		{`\u00e9 is é`, `"caf\u00e9"`, `"café"`},
		{`\/ is /`, `"a\/b"`, `"a/b"`},
		{"lone surrogate is escaped lowercase", `"x\uD800y\uDFFF"`, `"x\ud800y\udfff"`},
		{"a pair is one character", `"\ud83d\ude00"`, "\"\U0001F600\""},
		{"invalid UTF-8 per maximal subsequence", "\"a\xe2\x82b\xffc\xed\xa0\x80d\xf0\x9f\x98\"", "\"a\ufffdb\ufffdc\ufffd\ufffd\ufffdd\ufffd\""},
		{"controls", `"\u0001\u001f\b\t\n\f\r\"\\\u007f\u2028"`, "\"\\u0001\\u001f\\b\\t\\n\\f\\r\\\"\\\\\x7f\u2028\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv := plan(t, "["+event("a", "Push", c.data, "")+"]")
			want := `{"data":` + c.want + `,"dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`
			if string(pv.Republish[0].Body) != want {
				t.Fatalf("body %q\nwant %q", pv.Republish[0].Body, want)
			}
		})
	}
}

func TestFidelityKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, data, want string }{
		{"duplicates collapse to the last value, first position", `{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{"escaped duplicate", `{"a":1,"\u0061":2}`, `{"a":2}`},
		{"index keys first, ascending", `{"b":1,"10":2,"0":3,"01":4,"-1":5,"4294967295":6,"4294967294":7}`, `{"0":3,"10":2,"4294967294":7,"b":1,"01":4,"-1":5,"4294967295":6}`},
		{"nested __proto__ is data", `{"__proto__":{"x":1},"y":2}`, `{"__proto__":{"x":1},"y":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv := plan(t, "["+event("a", "Push", c.data, "")+"]")
			want := `{"data":` + c.want + `,"dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`
			if string(pv.Republish[0].Body) != want {
				t.Fatalf("body %s\nwant %s", pv.Republish[0].Body, want)
			}
		})
	}
	// The schema reads the last duplicate too: the id the estate counts is the last one.
	pv := plan(t, `[{"id":"x|9","subject":"/s","eventType":"Push","dataVersion":"1","data":null,"id":"x|1"}]`)
	if string(pv.Republish[0].Body) != `{"data":null,"dataVersion":"1","eventType":"Push","id":"x|2","subject":"/s"}` {
		t.Fatalf("duplicate id: %s", pv.Republish[0].Body)
	}
}

func TestFidelityRepublishIDs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, id, want string }{
		{"no count", `a`, `a|1`},
		{"a count", `a|1`, `a|2`},
		{"zero-padded count", `a|001`, `a|2`},
		{"lone surrogate original", `lone-\ud800|1`, `lone-\ud800|2`},
		{"escaped separator", `b\u007c1`, `b|2`},
		{"line terminator: never counted", `x\n|1`, `x\n|1|1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv := plan(t, "["+event(c.id, "Push", "1", "")+"]")
			want := `{"data":1,"dataVersion":"1","eventType":"Push","id":"` + c.want + `","subject":"/s"}`
			if string(pv.Republish[0].Body) != want {
				t.Fatalf("body %s\nwant %s", pv.Republish[0].Body, want)
			}
		})
	}
}

// The quarantine copy is JSON.stringify of the refused elements as JSON.parse built them, {...raw, id} with the
// original id in place and a top-level __proto__ dropped.
func TestFidelityQuarantineCopy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, elem, want string }{
		{"diagnostics kept, id in place, count stripped",
			`{"subject":"/s","id":"a|2","eventType":"Push","dataVersion":"1","data":{"k":1.0},"deadLetterReason":"MaxDeliveryAttemptsExceeded","deliveryAttempts":10}`,
			`{"subject":"/s","id":"a","eventType":"Push","dataVersion":"1","data":{"k":1},"deadLetterReason":"MaxDeliveryAttemptsExceeded","deliveryAttempts":10}`},
		{"whitespace and escapes normalised",
			"{ \"id\" : \"w\\u00e9|3\" ,\n\t\"subject\":\"\\/s\", \"eventType\":\"Webhook\",\"dataVersion\":\"1\",\"data\": [ 1E2 , -0 ] }",
			`{"id":"wé","subject":"/s","eventType":"Webhook","dataVersion":"1","data":[100,0]}`},
		{"top-level __proto__ dropped, nested kept",
			`{"__proto__":{"evil":true},"id":"p","subject":"/s","eventType":"Webhook","dataVersion":"1","data":{"__proto__":{"x":1}}}`,
			`{"id":"p","subject":"/s","eventType":"Webhook","dataVersion":"1","data":{"__proto__":{"x":1}}}`},
		{"duplicates collapsed, index keys first",
			`{"id":"d|1","7":"seven","subject":"/s","eventType":"Nope","dataVersion":"1","data":null,"subject":"/t","0":"zero","id":"d|5"}`,
			`{"0":"zero","7":"seven","id":"d","subject":"/t","eventType":"Nope","dataVersion":"1","data":null}`},
		{"lone surrogate id", `{"id":"\udc00","subject":"s","eventType":"Webhook","dataVersion":"1","data":"\ud800"}`,
			`{"id":"\udc00","subject":"s","eventType":"Webhook","dataVersion":"1","data":"\ud800"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv := plan(t, "["+c.elem+","+event("ok", "Push", "1", "")+"]")
			if want := "[" + c.want + "]"; string(pv.QuarantineBody) != want {
				t.Fatalf("quarantine copy %s\nwant %s", pv.QuarantineBody, want)
			}
			if len(pv.Republish) != 1 || pv.ArchiveName == "" {
				t.Fatalf("%+v", pv)
			}
		})
	}
	// A malformed payload's copy stays its raw bytes.
	raw := "[" + event("a|1", "Push", "1.0", "") + `,{"id":"b"}]`
	p := rules.ParsePayload([]byte(raw))
	if pv := rulestest.ConfigWith(rulestest.Register()).Plan(fidelityName, []byte(raw), p); !pv.Malformed || string(pv.QuarantineBody) != raw {
		t.Fatalf("malformed copy %s", pv.QuarantineBody)
	}
}

// The publish chunks are counted on the exact JSON.stringify bytes: \u00e9 is the 2-byte é (not 6 bytes of
// escape) and 1.0 is 1 (not 3), so each can decide whether two events share a request.
func TestFidelityChunkBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, raw, out string
	}{
		{`\u00e9 counts 2 bytes`, `\u00e9`, "é"},
		{`1.0 counts 1 byte`, `1.0`, `1`},
		{`\/ counts 1 byte`, `\/`, `/`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Two events, the first padded so that the request is exactly MaxPublishBytes with the exact bytes.
			small := event("b", "Push", `"`+c.raw+`"`, "")
			if c.raw == "1.0" {
				small = event("b", "Push", c.raw, "")
			}
			smallOut := `{"data":"` + c.out + `","dataVersion":"1","eventType":"Push","id":"b|1","subject":"/s"}`
			if c.raw == "1.0" {
				smallOut = `{"data":1,"dataVersion":"1","eventType":"Push","id":"b|1","subject":"/s"}`
			}
			bigOut := func(pad int) string {
				return `{"data":"` + strings.Repeat("x", pad) + `","dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`
			}
			pad := rules.MaxPublishBytes - 1 - (len(smallOut) + 1) - 1 - len(bigOut(0))
			for _, extra := range []int{0, 1} {
				body := "[" + event("a", "Push", `"`+strings.Repeat("x", pad+extra)+`"`, "") + "," + small + "]"
				pv := plan(t, body)
				if string(pv.Republish[1].Body) != smallOut || string(pv.Republish[0].Body) != bigOut(pad+extra) {
					t.Fatalf("bodies %q", pv.Republish[1].Body)
				}
				switch {
				case extra == 0 && (len(pv.PublishRequests) != 1 || pv.PublishRequests[0].Bytes != rules.MaxPublishBytes):
					t.Fatalf("exactly at the limit: %+v", pv.PublishRequests)
				case extra == 1 && len(pv.PublishRequests) != 2:
					t.Fatalf("one byte over: %+v", pv.PublishRequests)
				}
				// Counting the payload's text instead (len(c.raw) for len(c.out)) would have split even the first.
			}
		})
	}
}

func TestFidelityDataRequired(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, body, want string }{
		{"absent", `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1"}]`, `element 0, field "data": missing (required; any value, null included)`},
		{"absent in the second", "[" + event("a", "Push", "1", "") + `,{"id":"b","subject":"s","eventType":"Push","dataVersion":"1","Data":{}}]`, `element 1, field "data": missing (required; any value, null included)`},
		{"only nested", `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","x":{"data":1}}]`, `element 0, field "data": missing (required; any value, null included)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rules.ParsePayload([]byte(c.body))
			if !p.Malformed() || p.Err.Error() != c.want {
				t.Fatalf("%v", p.Err)
			}
			if pv := rulestest.ConfigWith(rulestest.Register()).Plan(fidelityName, []byte(c.body), p); !pv.Malformed || string(pv.QuarantineBody) != c.body || !pv.DeleteOriginal {
				t.Fatalf("%+v", pv)
			}
		})
	}
	for _, data := range []string{`null`, `false`, `0`, `""`, `[]`, `{}`} {
		if p := rules.ParsePayload([]byte("[" + event("a", "Push", data, "") + "]")); p.Malformed() {
			t.Errorf("data %s: %v", data, p.Err)
		}
	}
}

// nested is v wrapped in n arrays.
func nested(n int, v string) string { return strings.Repeat("[", n) + v + strings.Repeat("]", n) }

// The replay function crashes where JSON.stringify does: on what it serializes — the five envelope fields of an
// event it republishes (so a deep field the schema does not keep costs nothing), the whole element of one it
// quarantines — past the depth every runtime overflows at; between the depths the known runtimes accept it may
// crash (a warning). Depths count the array the value sits in and the element object: data nested d levels is
// d+2 deep. (node_test checks the same against the node on this machine, with its measured stack depth.)
func TestFidelityDepth(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	over, safe := rules.CertainStackDepth+1, rules.SafeStackDepth
	extra := func(d int) string { return `,"extra":` + nested(d-2, "") }
	for _, tc := range []struct {
		name  string
		body  string
		crash int // the crash's depth (0: none)
		stage rules.CrashStage
		may   int
	}{
		{"deep data crashes the republish", "[" + event("a", "Push", nested(over-2, "1"), "") + "]", over, rules.StagePublish, 0},
		{"at the safe depth nothing happens", "[" + event("a", "Push", nested(safe-2, "1"), "") + "]", 0, 0, 0},
		{"one deeper may crash", "[" + event("a", "Push", nested(safe-1, "1"), "") + "]", 0, 0, safe + 1},
		{"up to the certain depth it may", "[" + event("a", "Push", nested(over-3, "1"), "") + "]", 0, 0, over - 1},
		{"a deep extra field of a republished event costs nothing", "[" + event("a", "Push", "1", extra(10001)) + "]", 0, 0, 0},
		{"a deep extra field of a quarantined event crashes first", "[" + event("a|5", "Push", "1", extra(over)) + "]", over, rules.StageQuarantine, 0},
		{"a refused event's data crashes before anything is written", "[" + event("a", "Push", "1", "") + "," + event("b", "Webhook", `{"x":`+nested(over-3, "")+`}`, "") + "]", over, rules.StageQuarantine, 0},
		{"deep republish after a shallow quarantine: the copy is written first", "[" + event("a|5", "Push", "1", "") + "," + event("b", "Push", nested(over-2, ""), "") + "]", over, rules.StagePublish, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := rules.ParsePayload([]byte(tc.body))
			if p.Malformed() {
				t.Fatalf("malformed %v", p.Err)
			}
			pv := c.Plan(fidelityName, []byte(tc.body), p)
			s := c.Summarize(fidelityName, p)
			if s.MayCrash != tc.may || pv.MayCrash != tc.may {
				t.Fatalf("may crash: summary %d, preview %d, want %d", s.MayCrash, pv.MayCrash, tc.may)
			}
			if tc.crash == 0 {
				if pv.Crash != nil || s.CrashDepth != 0 || len(pv.Republish)+len(pv.Quarantine) != len(p.Events) || !pv.DeleteOriginal {
					t.Fatalf("%+v", pv)
				}
				return
			}
			if pv.Crash == nil || pv.Crash.Depth != tc.crash || pv.Crash.Stage != tc.stage || pv.DeleteOriginal || len(pv.Republish) != 0 ||
				pv.ArchiveName != "" || len(pv.PublishRequests) != 0 {
				t.Fatalf("crash preview %+v", pv)
			}
			// Before anything: no quarantine copy. After the copy: the copy is what it would be without the crash.
			if wrote := pv.QuarantineName != ""; wrote != (tc.stage == rules.StagePublish && len(pv.Quarantine) > 0) {
				t.Fatalf("quarantine copy %q at stage %d", pv.QuarantineName, tc.stage)
			}
			// The verdicts stay as judged; the crash is the blob's outcome.
			if s.CrashDepth != tc.crash || s.Malformed || s.Verdicts[rules.VerdictReplay]+s.Verdicts[rules.VerdictCap]+s.Verdicts[rules.VerdictNotIdempotent] != len(p.Events) {
				t.Fatalf("summary %+v", s)
			}
		})
	}
	// A pinned runtime (--node-stack-depth) is exact: no band.
	pinned := c
	pinned.StackDepth = 3000
	body := "[" + event("a", "Push", nested(2999, ""), "") + "]"
	if pv := pinned.Plan(fidelityName, []byte(body), rules.ParsePayload([]byte(body))); pv.Crash == nil || pv.Crash.Depth != 3001 || pv.MayCrash != 0 {
		t.Fatalf("pinned at 3000, depth 3001: %+v", pv)
	}
	// JSON.stringify never sees a value a duplicate key threw away: the estate serializes what JSON.parse kept.
	body = `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":` + nested(6000, "") + `,"data":1}]`
	p := rules.ParsePayload([]byte(body))
	if pv := c.Plan(fidelityName, []byte(body), p); p.Malformed() || pv.Crash != nil || pv.MayCrash != 0 || string(pv.Republish[0].Body) != `{"data":1,"dataVersion":"1","eventType":"Push","id":"a|1","subject":"s"}` {
		t.Fatalf("%+v", pv)
	}
	// A malformed payload is quarantined as its raw bytes, however deep: nothing is serialized.
	for _, deep := range []string{nested(100000, ""), "[" + nested(5000, "") + `,{"id":1}]`, `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","x":` + nested(5000, "") + `}]`} {
		p := rules.ParsePayload([]byte(deep))
		pv := c.Plan(fidelityName, []byte(deep), p)
		if !p.Malformed() || pv.Crash != nil || !pv.Malformed || string(pv.QuarantineBody) != deep || c.Summarize(fidelityName, p).CrashDepth != 0 {
			t.Fatalf("malformed deep payload: %v %+v", p.Err, pv.Crash)
		}
	}
}

// Restore strips counts the same way: the restored copy is JSON.stringify of the re-serialized elements when any
// id carried a count, the original bytes when none did; a payload that deep is refused.
func TestFidelityRestoreBody(t *testing.T) {
	t.Parallel()
	c := rulestest.ConfigWith(rulestest.Register())
	now := time.Date(2026, 11, 30, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct{ name, body, want string }{
		{"a count stripped, the rest re-serialized",
			"[" + event("a|2", "Push", `{"n":1.0}`, `,"__proto__":1`) + ",\n " + event("b", "Push", `"\u00e9"`, "") + "]",
			`[{"id":"a","subject":"/s","eventType":"Push","dataVersion":"1","data":{"n":1}},{"id":"b","subject":"/s","eventType":"Push","dataVersion":"1","data":"é"}]`},
		{"no count: the bytes unchanged",
			"[" + event("a", "Push", `{"n":1.0}`, "") + ",\n " + event("b", "Push", `"\u00e9"`, "") + "]", ""},
		{"lone surrogate original", "[" + event(`\ud800|9`, "Push", `1E2`, "") + "]",
			`[{"id":"\ud800","subject":"/s","eventType":"Push","dataVersion":"1","data":100}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := c.PlanRestore("quarantine/"+fidelityName, []byte(tc.body), rules.ParsePayload([]byte(tc.body)), now)
			want := tc.want
			if want == "" {
				want = tc.body
			}
			if string(rp.Body) != want || rp.Refused() {
				t.Fatalf("restored copy %s\nwant %s (%+v)", rp.Body, want, rp.Refusal)
			}
		})
	}
	deep := "[" + event("a|2", "Push", nested(5000, ""), "") + "]"
	rp := c.PlanRestore("quarantine/"+fidelityName, []byte(deep), rules.ParsePayload([]byte(deep)), now)
	if len(rp.Resume) != 1 || rp.Crash == nil || rp.Crash.Depth != 5002 || rp.Crash.Stage != rules.StagePublish || rp.Refusal.Kind != rules.ReasonCrash || rp.Refusal.Depth != 5002 {
		t.Fatalf("deep restore: %+v", rp)
	}
}
