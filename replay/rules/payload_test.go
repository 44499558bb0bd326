package rules_test

import (
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/jsjson"
	"github.com/deadletter/deadletter/replay/rules"
)

const goodEvent = `{"id":"e1","subject":"/s","eventType":"T","dataVersion":"1","data":{"x":1},"deadLetterReason":"MaxDeliveryAttemptsExceeded","deliveryAttempts":10,"lastDeliveryOutcome":"Busy","lastHttpStatusCode":503,"publishTime":"2026-01-01T00:00:00Z","lastDeliveryAttemptTime":"2026-01-01T01:00:00Z","topic":"t","custom":true}`

func TestParsePayloadValid(t *testing.T) {
	t.Parallel()
	p := rules.ParsePayload([]byte(`[` + goodEvent + `,` + goodEvent + `]`))
	if p.Malformed() {
		t.Fatalf("valid payload malformed: %v", p.Err)
	}
	if len(p.Events) != 2 {
		t.Fatalf("duplicate ids are valid: got %d events", len(p.Events))
	}
	e := p.Events[1]
	if e.Index != 1 || e.ID != "e1" || e.Subject != "/s" || e.EventType != "T" || e.DataVersion != "1" || !e.HasData ||
		e.DeadLetterReason != "MaxDeliveryAttemptsExceeded" || *e.DeliveryAttempts != 10 || e.LastDeliveryOutcome != "Busy" ||
		*e.LastHTTPStatusCode != 503 || e.PublishTime == "" || e.LastDeliveryAttemptTime == "" || !strings.Contains(string(e.Raw), `"custom":true`) {
		t.Fatalf("fields not read: %+v", e)
	}
	if p := rules.ParsePayload([]byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":null}]`)); p.Malformed() || !p.Events[0].HasData {
		t.Fatalf("data may be null: %+v", p)
	}
	// data is required: without it the estate's schema refuses the whole blob, naming the element and field.
	p = rules.ParsePayload([]byte(`[` + goodEvent + `,{"id":"a","subject":"s","eventType":"T","dataVersion":"1"}]`))
	if !p.Malformed() || p.Err.Error() != `element 1, field "data": missing (required; any value, null included)` {
		t.Fatalf("data absent: %v", p.Err)
	}
	if p := rules.ParsePayload([]byte(`[]`)); p.Malformed() || len(p.Events) != 0 {
		t.Fatalf("empty array: %+v", p)
	}
}

// Keys are matched as JavaScript does: exactly (case-sensitive), escapes decoded, the last duplicate winning.
func TestParsePayloadKeys(t *testing.T) {
	t.Parallel()
	p := rules.ParsePayload([]byte(`[{"ID":"upper","id":"first","subject":"s","event\u0054ype":"T","dataVersion":"1","id":"last","nested":{"id":"no"},"data":1}]`))
	if p.Malformed() || p.Events[0].ID != "last" || p.Events[0].EventType != "T" {
		t.Fatalf("%+v %v", p.Events, p.Err)
	}
	if p := rules.ParsePayload([]byte(`[{"ID":"a","Subject":"s","EventType":"T","DataVersion":"1"}]`)); !p.Malformed() {
		t.Fatal("field names are case-sensitive")
	}
	if p := rules.ParsePayload([]byte(`[{"id":"a\"b\u00e9\n","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`)); p.Events[0].ID != "a\"bé\n" {
		t.Fatalf("escapes: %q", p.Events[0].ID)
	}
}

func TestParsePayloadMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body, want string }{
		{"not JSON", `[{"id":`, "JSON syntax error at byte offset"},
		{"trailing garbage", `[]x`, "JSON syntax error at byte offset 2: unexpected data after the JSON value"},
		{"object", `{"id":"a"}`, "not an array: the payload is a JSON object"},
		{"string", `"hi"`, "not an array: the payload is a JSON string"},
		{"null", `null`, "not an array: the payload is null"},
		{"BOM", "\xef\xbb\xbf[]", "JSON syntax error at byte offset 0: unexpected character U+FEFF (a byte order mark"},
		{"number", `7`, "not an array: the payload is a JSON number"},
		{"element not object", `[1]`, "element 0: want an object, got a number"},
		{"missing field", `[` + goodEvent + `,{"id":"a","subject":"s","eventType":"T"}]`, `element 1, field "dataVersion": missing`},
		{"number id", `[{"id":1,"subject":"s","eventType":"T","dataVersion":"1"}]`, `element 0, field "id": want a string, got a number`},
		{"null subject", `[{"id":"a","subject":null,"eventType":"T","dataVersion":"1"}]`, `field "subject": want a string, got null`},
		// JSON.parse has no depth limit: this is a valid array whose element 0 is not an object.
		{"deep nesting", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), "element 0: want an object, got an array"},
		{"deep object element", "[" + goodEvent + ",{\"a\":" + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}]", `element 1, field "id": missing`},
		{"unclosed deep", strings.Repeat("[", 100000), "JSON syntax error at byte offset 100000: unexpected end of input"},
		{"data only capitalised", `[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","Data":1}]`, `element 0, field "data": missing (required; any value, null included)`},
		{"lone surrogate is not a string's end", `[{"id":"\ud800,"subject":"s"}]`, "JSON syntax error"},
		{"empty", ``, "JSON syntax error"},
	}
	for _, c := range cases {
		p := rules.ParsePayload([]byte(c.body))
		if !p.Malformed() {
			t.Errorf("%s: not malformed", c.name)
			continue
		}
		if !strings.Contains(p.Err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, p.Err.Error(), c.want)
		}
	}
}

// CloudEvents payloads are malformed for the estate, but their fields are still shown.
func TestParsePayloadCloudEventsShownAnyway(t *testing.T) {
	t.Parallel()
	body := `[{"specversion":"1.0","type":"Contoso.Items.ItemReceived","source":"/contoso/items","id":"ce-1","subject":"widget","deadletterreason":"MaxDeliveryAttemptsExceeded","deliveryattempts":3,"lastdeliveryoutcome":"NotFound","lasthttpstatuscode":404}]`
	p := rules.ParsePayload([]byte(body))
	if !p.Malformed() || !strings.Contains(p.Err.Error(), `"eventType": missing`) {
		t.Fatalf("CloudEvents payload: %v", p.Err)
	}
	e := p.Events[0]
	if e.ID != "ce-1" || e.EventType != "Contoso.Items.ItemReceived" || e.DeadLetterReason != "MaxDeliveryAttemptsExceeded" || *e.DeliveryAttempts != 3 || e.LastDeliveryOutcome != "NotFound" {
		t.Fatalf("fields not shown: %+v", e)
	}
}

// Strings are decoded as Buffer.toString("utf8") + JSON.parse decode them: a lone surrogate escape stays a lone
// surrogate (WTF-8), each maximal invalid UTF-8 subsequence becomes one U+FFFD, and a BOM-headed body still shows
// its events.
func TestParsePayloadJSStrings(t *testing.T) {
	t.Parallel()
	body := "[{\"id\":\"lone-\\ud800|1\",\"subject\":\"a\xe2\x82b\xffc\xf0\x9f\x98\",\"eventType\":\"\\ud83d\\ude00\",\"dataVersion\":\"\\/1\",\"data\":null}]"
	p := rules.ParsePayload([]byte(body))
	if p.Malformed() {
		t.Fatal(p.Err)
	}
	e := p.Events[0]
	if e.ID != "lone-\xed\xa0\x80|1" || e.Subject != "a\ufffdb\ufffdc\ufffd" || e.EventType != "\U0001F600" || e.DataVersion != "/1" {
		t.Fatalf("%+q %+q %+q %+q", e.ID, e.Subject, e.EventType, e.DataVersion)
	}
	if p := rules.ParsePayload([]byte("\xef\xbb\xbf[" + goodEvent + "]")); !p.Malformed() || p.Err.Offset != 0 || len(p.Events) != 1 || p.Events[0].ID != "e1" {
		t.Fatalf("BOM: %v %+v", p.Err, p.Events)
	}
	// A count given as 10.0 is the number 10 to JavaScript.
	if p := rules.ParsePayload([]byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":1,"deliveryAttempts":10.0,"lastHttpStatusCode":"503"}]`)); *p.Events[0].DeliveryAttempts != 10 || *p.Events[0].LastHTTPStatusCode != 503 {
		t.Fatalf("%+v", p.Events[0])
	}
}

func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{`[` + goodEvent + `]`, `[]`, `null`, `{}`, "\xef\xbb\xbf[]", `[{"id":1}]`, `[[[`, `[{"id":"a|1","subject":"s","eventType":"T","dataVersion":"1"}]`,
		`[{"id":"a|1","subject":"s","eventType":"T","dataVersion":"1","data":{"__proto__":1,"1":1.0,"0":[1E2,-0]}}]`,
		`[{"id":"\ud800|1","id":"b","subject":"\u00e9\/","eventType":"U","dataVersion":"1","data":"\xff\xe2\x82","__proto__":{}}]`,
		`[{"id":"a|2","subject":"s","eventType":"T","dataVersion":"1","data":` + strings.Repeat("[", 4001) + strings.Repeat("]", 4001) + `}]`} {
		f.Add([]byte(s))
	}
	cfg := rules.DefaultConfig()
	cfg.Handlers = rules.Register{"T": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := rules.ParsePayload(body)
		if p.Malformed() && p.Err.Error() == "" {
			t.Fatal("malformed without a message")
		}
		// The scan-only parser agrees with a full JSON.parse (jsjson.Parse) on validity, on every field the
		// schema reads (keys exact, escapes decoded, the last duplicate winning) and on the depth.
		v, perr := jsjson.Parse(body)
		if (perr != nil) != (p.Malformed() && p.Err.Offset >= 0) {
			t.Fatalf("syntax: Parse %v, ParsePayload %v", perr, p.Err)
		}
		if !p.Malformed() {
			if v.Kind() != jsjson.Array || v.Len() != len(p.Events) {
				t.Fatalf("valid payload is %s of %d, want an array of %d", v.Kind(), v.Len(), len(p.Events))
			}
			for i, e := range p.Events {
				el := v.Index(i)
				for f, got := range map[string]string{"id": e.ID, "subject": e.Subject, "eventType": e.EventType, "dataVersion": e.DataVersion} {
					want, ok := el.Get(f)
					if !ok || want.Kind() != jsjson.String || want.Str() != got {
						t.Fatalf("element %d field %s: ParsePayload %q, JSON.parse %v", i, f, got, want)
					}
				}
				if _, ok := el.Get("data"); !ok || !e.HasData {
					t.Fatalf("element %d: data", i)
				}
			}
			if d := jsjson.Depth(v); p.Depth < d {
				t.Fatalf("depth %d, JSON.parse's value is %d deep", p.Depth, d)
			}
		}
		pv := cfg.Plan("S/2026/1/1/1/g.json", body, p)
		switch {
		case p.Malformed():
			if pv.Crash != nil || string(pv.QuarantineBody) != string(body) {
				t.Fatal("a malformed payload is quarantined as its raw bytes and never crashes")
			}
		case pv.Crash != nil:
			if pv.Crash.Depth > p.Depth || pv.Crash.Depth <= rules.CertainStackDepth || pv.DeleteOriginal || len(pv.Republish) != 0 || pv.ArchiveName != "" ||
				pv.Crash.Stage == rules.StageQuarantine && pv.QuarantineName != "" {
				t.Fatalf("crash preview: %+v", pv)
			}
		default:
			if pv.Crash != nil || len(pv.Republish)+len(pv.Quarantine) != len(p.Events) {
				t.Fatalf("preview lost events: %d+%d != %d", len(pv.Republish), len(pv.Quarantine), len(p.Events))
			}
		}
		if len(pv.Quarantine) > 0 {
			q := rules.ParsePayload(pv.QuarantineBody)
			if q.Malformed() || len(q.Events) != len(pv.Quarantine) {
				t.Fatalf("quarantine body does not parse back: %v", q.Err)
			}
			for i, e := range q.Events {
				if e.ID != pv.Quarantine[i].ID {
					t.Fatalf("quarantine copy id %q, want %q", e.ID, pv.Quarantine[i].ID)
				}
			}
		}
		for _, r := range pv.Republish {
			b, err := jsjson.Parse(r.Body)
			if err != nil || b.Len() != 5 {
				t.Fatalf("republish body %q: %v", r.Body, err)
			}
			if id, _ := b.Get("id"); id.Str() != r.ID {
				t.Fatalf("republished id %q, body says %q", r.ID, id.Str())
			}
		}
		// A body written back parses to the same bytes again: JSON.stringify output is a fixed point.
		if pv.QuarantineBody != nil && !p.Malformed() {
			if v, err := jsjson.Parse(pv.QuarantineBody); err != nil || string(jsjson.Stringify(v)) != string(pv.QuarantineBody) {
				t.Fatalf("quarantine body is not JSON.stringify output: %v", err)
			}
		}
	})
}
