package replay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/replay"
)

const goodEvent = `{"id":"e1","subject":"/s","eventType":"T","dataVersion":"1","data":{"x":1},"deadLetterReason":"MaxDeliveryAttemptsExceeded","deliveryAttempts":10,"lastDeliveryOutcome":"Busy","lastHttpStatusCode":503,"publishTime":"2026-01-01T00:00:00Z","lastDeliveryAttemptTime":"2026-01-01T01:00:00Z","topic":"t","custom":true}`

func TestParsePayloadValid(t *testing.T) {
	p := replay.ParsePayload([]byte(`[` + goodEvent + `,` + goodEvent + `]`))
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
	if p := replay.ParsePayload([]byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":null}]`)); p.Malformed() || !p.Events[0].HasData {
		t.Fatalf("data may be null: %+v", p)
	}
	// data is required: without it the estate's schema refuses the whole blob, naming the element and field.
	p = replay.ParsePayload([]byte(`[` + goodEvent + `,{"id":"a","subject":"s","eventType":"T","dataVersion":"1"}]`))
	if !p.Malformed() || p.Err.Error() != `element 1, field "data": missing (required; any value, null included)` {
		t.Fatalf("data absent: %v", p.Err)
	}
	if p := replay.ParsePayload([]byte(`[]`)); p.Malformed() || len(p.Events) != 0 {
		t.Fatalf("empty array: %+v", p)
	}
}

// Keys are matched as JavaScript does: exactly (case-sensitive), escapes decoded, the last duplicate winning.
func TestParsePayloadKeys(t *testing.T) {
	p := replay.ParsePayload([]byte(`[{"ID":"upper","id":"first","subject":"s","event\u0054ype":"T","dataVersion":"1","id":"last","nested":{"id":"no"},"data":1}]`))
	if p.Malformed() || p.Events[0].ID != "last" || p.Events[0].EventType != "T" {
		t.Fatalf("%+v %v", p.Events, p.Err)
	}
	if p := replay.ParsePayload([]byte(`[{"ID":"a","Subject":"s","EventType":"T","DataVersion":"1"}]`)); !p.Malformed() {
		t.Fatal("field names are case-sensitive")
	}
	if p := replay.ParsePayload([]byte(`[{"id":"a\"b\u00e9\n","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`)); p.Events[0].ID != "a\"bé\n" {
		t.Fatalf("escapes: %q", p.Events[0].ID)
	}
}

func TestParsePayloadMalformed(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"not JSON", `[{"id":`, "JSON syntax error at byte offset"},
		{"trailing garbage", `[]x`, "JSON syntax error at byte offset 3"},
		{"object", `{"id":"a"}`, "not an array: the payload is a JSON object"},
		{"string", `"hi"`, "not an array: the payload is a JSON string"},
		{"null", `null`, "not an array: the payload is null"},
		{"BOM", "\xef\xbb\xbf[]", "byte order mark"},
		{"element not object", `[1]`, "element 0: want an object, got a number"},
		{"missing field", `[` + goodEvent + `,{"id":"a","subject":"s","eventType":"T"}]`, `element 1, field "dataVersion": missing`},
		{"number id", `[{"id":1,"subject":"s","eventType":"T","dataVersion":"1"}]`, `element 0, field "id": want a string, got a number`},
		{"null subject", `[{"id":"a","subject":null,"eventType":"T","dataVersion":"1"}]`, `field "subject": want a string, got null`},
		{"deep nesting", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), "JSON syntax error"},
		{"empty", ``, "JSON syntax error"},
	}
	for _, c := range cases {
		p := replay.ParsePayload([]byte(c.body))
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
	body := `[{"specversion":"1.0","type":"Contoso.Items.ItemReceived","source":"/contoso/items","id":"ce-1","subject":"widget","deadletterreason":"MaxDeliveryAttemptsExceeded","deliveryattempts":3,"lastdeliveryoutcome":"NotFound","lasthttpstatuscode":404}]`
	p := replay.ParsePayload([]byte(body))
	if !p.Malformed() || !strings.Contains(p.Err.Error(), `"eventType": missing`) {
		t.Fatalf("CloudEvents payload: %v", p.Err)
	}
	e := p.Events[0]
	if e.ID != "ce-1" || e.EventType != "Contoso.Items.ItemReceived" || e.DeadLetterReason != "MaxDeliveryAttemptsExceeded" || *e.DeliveryAttempts != 3 || e.LastDeliveryOutcome != "NotFound" {
		t.Fatalf("fields not shown: %+v", e)
	}
}

func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{`[` + goodEvent + `]`, `[]`, `null`, `{}`, "\xef\xbb\xbf[]", `[{"id":1}]`, `[[[`, `[{"id":"a|1","subject":"s","eventType":"T","dataVersion":"1"}]`} {
		f.Add([]byte(s))
	}
	cfg := replay.DefaultConfig()
	cfg.Handlers = replay.Register{"T": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := replay.ParsePayload(body)
		if p.Malformed() && p.Err.Error() == "" {
			t.Fatal("malformed without a message")
		}
		// The fast field scanner agrees with encoding/json's exact-key map decode on every valid payload.
		if !p.Malformed() {
			var elems []map[string]json.RawMessage
			if err := json.Unmarshal(body, &elems); err != nil {
				t.Fatalf("valid payload does not decode: %v", err)
			}
			for i, m := range elems {
				for f, got := range map[string]string{"id": p.Events[i].ID, "subject": p.Events[i].Subject, "eventType": p.Events[i].EventType, "dataVersion": p.Events[i].DataVersion} {
					var want string
					json.Unmarshal(m[f], &want)
					if got != want {
						t.Fatalf("element %d field %s: scanner %q, encoding/json %q", i, f, got, want)
					}
				}
			}
		}
		pv := cfg.Plan("S/2026/1/1/1/g.json", body, p)
		if !p.Malformed() && len(pv.Republish)+len(pv.Quarantine) != len(p.Events) {
			t.Fatalf("preview lost events: %d+%d != %d", len(pv.Republish), len(pv.Quarantine), len(p.Events))
		}
		if len(pv.Quarantine) > 0 {
			if q := replay.ParsePayload(pv.QuarantineBody); q.Malformed() || len(q.Events) != len(pv.Quarantine) {
				t.Fatalf("quarantine body does not parse back: %v", q.Err)
			}
		}
	})
}
