package estate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/estate"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

type publisher struct{ requests [][]json.RawMessage }

func (p *publisher) Publish(_ context.Context, evs []json.RawMessage) error {
	p.requests = append(p.requests, evs)
	return nil
}

func config() rules.Config {
	c := rules.DefaultConfig()
	c.Handlers = rules.Register{"Push": true, "Webhook": false}
	return c
}

func names(t *testing.T, c store.Container) []string {
	t.Helper()
	l, err := store.ListAll(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range l.Blobs {
		out = append(out, b.Name)
	}
	return out
}

// What Handle writes and publishes is exactly the Plan's bytes: the quarantine copy as JSON.stringify writes the
// refused elements, the republished bodies, in the Plan's requests.
func TestHandleWritesThePlan(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewMem(time.Now())
	const name = "S/2026/1/1/1/g.json"
	body := []byte("[{\"id\":\"a|2\", \"subject\":\"/s\",\"eventType\":\"Push\",\"dataVersion\":\"1\",\"data\":{\"n\":1.0,\"s\":\"\\u00e9\"},\"__proto__\":{},\"deadLetterReason\":\"MaxDeliveryAttemptsExceeded\"}," +
		"{\"id\":\"b|1\",\"subject\":\"/s\",\"eventType\":\"Push\",\"dataVersion\":\"1\",\"data\":[1E2,-0]}]")
	if _, err := c.Write(ctx, name, body, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	pub := &publisher{}
	h, err := estate.Handle(ctx, c, config(), name, pub)
	if err != nil {
		t.Fatal(err)
	}
	pv := h.Preview
	q, err := c.Read(ctx, pv.QuarantineName, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"id":"a","subject":"/s","eventType":"Push","dataVersion":"1","data":{"n":1,"s":"é"},"deadLetterReason":"MaxDeliveryAttemptsExceeded"}]`; string(q.Body) != want || string(pv.QuarantineBody) != want {
		t.Fatalf("quarantine copy %s\nwant %s", q.Body, want)
	}
	if len(pub.requests) != 1 || string(pub.requests[0][0]) != `{"data":[100,0],"dataVersion":"1","eventType":"Push","id":"b|2","subject":"/s"}` {
		t.Fatalf("published %s", pub.requests)
	}
	a, err := c.Read(ctx, pv.ArchiveName, store.MaxBlobBytes)
	if err != nil || string(a.Body) != string(body) || !h.Deleted {
		t.Fatalf("archive %v %v", err, h)
	}
}

// A payload nested past JSON.stringify's reach: Handle throws as the estate does, having written, published and
// deleted nothing, and throws again on every redelivery.
func TestHandleCrashWritesNothing(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewMem(time.Now())
	const name = "S/2026/1/1/1/deep.json"
	body := []byte(`[{"id":"a|1","subject":"/s","eventType":"Webhook","dataVersion":"1","data":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `},` +
		`{"id":"b","subject":"/s","eventType":"Push","dataVersion":"1","data":1}]`)
	if _, err := c.Write(ctx, name, body, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Stat(ctx, name)
	pub := &publisher{}
	for i := 0; i < 3; i++ {
		h, err := estate.Handle(ctx, c, config(), name, pub)
		if err == nil || !strings.Contains(err.Error(), "ReplayDeadLetterEvent failed") {
			t.Fatalf("delivery %d: err %v", i, err)
		}
		if h.Preview.Crash == nil || h.Preview.Crash.Depth != 5002 || h.Quarantined || h.Published != 0 || h.Archived || h.Deleted {
			t.Fatalf("delivery %d: %+v", i, h)
		}
	}
	if got := names(t, c); len(got) != 1 || got[0] != name || len(pub.requests) != 0 {
		t.Fatalf("the crash wrote something: %v, published %d", got, len(pub.requests))
	}
	if after, err := c.Stat(ctx, name); err != nil || after.ETag != before.ETag {
		t.Fatalf("the crash touched the blob: %v", err)
	}
	// A malformed payload, however deep, is quarantined as its raw bytes and deleted.
	bad := []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000))
	c.Write(ctx, "S/bad.json", bad, store.WriteOptions{})
	h, err := estate.Handle(ctx, c, config(), "S/bad.json", pub)
	if err != nil || !h.Preview.Malformed || !h.Deleted {
		t.Fatalf("%v %+v", err, h)
	}
	if q, err := c.Read(ctx, "quarantine/S/bad.json", store.MaxBlobBytes); err != nil || string(q.Body) != string(bad) {
		t.Fatalf("raw copy: %v", err)
	}
	if _, err := c.Stat(ctx, "S/bad.json"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("malformed original left: %v", err)
	}
}
