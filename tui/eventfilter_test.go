package tui

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// The filter's words on what is inside the events show the blobs holding such an event — the answer worked out
// from the bytes with encoding/json — and, while the events are being read, the footer says how many blobs are
// not judged yet rather than hiding them silently.
func TestFilterOnEventsShowsTheBlobsHoldingSuchAnEvent(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 300)
	type ev struct {
		EventType string
		Data      map[string]any
	}
	bodies := map[string][]ev{}
	all, err := store.ListAll(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, bi := range all.Blobs {
		b, err := mem.Read(context.Background(), bi.Name, store.MaxBlobBytes)
		if err != nil {
			t.Fatal(err)
		}
		var evs []ev
		_ = json.Unmarshal(b.Body, &evs)
		bodies[bi.Name] = evs
		for _, e := range evs {
			if u, ok := e.Data["userId"].(string); ok && user == "" && e.EventType == "ProcessPushNotification" && !strings.HasPrefix(bi.Name, "archived/") {
				user = u
			}
		}
	}
	if user == "" {
		t.Fatal("no push notification with a user in the fixture")
	}
	want := map[string]bool{}
	for n, evs := range bodies {
		for _, e := range evs {
			if u, _ := e.Data["userId"].(string); e.EventType == "ProcessPushNotification" && strings.EqualFold(u, user) {
				want[n] = true
			}
		}
	}
	hs := newHarness(t, mem, cfg, 160, 40)
	hs.pause()
	hs.press("/type:ProcessPushNotification data.userId:="+strings.ToUpper(user), "<enter>")
	hs.shows("not judged yet")
	hs.resume()
	hs.settle()
	hs.lacks("not judged yet")
	got := map[string]bool{}
	for _, tb := range hs.m.tables {
		for _, i := range tb.rows {
			got[hs.m.snap.Items[i].Name] = true
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the filter shows %v, want %v", got, want)
	}
}

// v lists the saved views; typing narrows them, tab completes the name, enter opens one: its filter on every
// pane and its sort where the pane has its column.
func TestSavedViewOpensItsFilterAndSort(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 120)
	views := []session.View{{Name: "stranded-webhooks", Filter: "sub:=WEBHOOKS is:root", Sort: "events asc"}, {Name: "push", Filter: "sub:push"}}
	hs := newHarness(t, mem, cfg, 160, 40, func(o *Options) { o.Views = views })
	hs.press("v")
	hs.shows("Saved views", "stranded-webhooks", "sub:=WEBHOOKS is:root")
	hs.press("str", "<tab>")
	hs.shows("view: stranded-webhooks")
	hs.press("<enter>")
	hs.shows("view stranded-webhooks (sorted by events)")
	if hs.m.filter.text != "sub:=WEBHOOKS is:root" {
		t.Errorf("the filter is %q", hs.m.filter.text)
	}
	tb := hs.m.tables[0]
	if len(tb.rows) == 0 {
		t.Fatal("the view shows no stranded blob")
	}
	prev := int64(-1)
	for _, i := range tb.rows {
		it := hs.m.snap.Items[i]
		if it.Parsed.Subscription != "WEBHOOKS" {
			t.Errorf("%s shown under the view", it.Name)
		}
		if n := int64(it.Summary.Events); n < prev {
			t.Errorf("not sorted by events ascending: %d after %d", n, prev)
		} else {
			prev = n
		}
	}
}

// One voice: the detail's advice for every blob is what show says of it — the same sentences, its subscription's
// readiness read by show from the container (Loader.ReadinessOf) as the dashboard reads it from its snapshot.
func TestTheDetailAdvisesAsShowDoes(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 80)
	hs := newHarness(t, mem, cfg, 200, 60)
	l := hs.m.opt.Session.Loader()
	seen := 0
	for _, it := range hs.m.snap.Items {
		if it.Pane == rules.PaneArchived || strings.ContainsAny(it.Name, "\x1b\x07") {
			continue
		}
		d, err := l.Inspect(context.Background(), it.Name)
		if err != nil {
			t.Fatal(err)
		}
		state := present.StateOf(d, cfg)
		if state.Readiness, err = l.ReadinessOf(context.Background(), d.Parsed.Subscription, d.Now); err != nil {
			t.Fatal(err)
		}
		hs.send(openBlobMsg{it.Name})
		hs.settle()
		var got []string
		for _, line := range strings.Split(hs.screen(), "\n") {
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "→ ") {
				got = append(got, strings.TrimPrefix(s, "→ "))
			}
		}
		want := present.Advice(state)
		if len(got) < len(want) {
			t.Errorf("%s: the detail advises %q, show %q", it.Name, got, want)
		}
		for i := range want {
			if i < len(got) && !strings.HasPrefix(want[i], strings.TrimSuffix(got[i], "…")) {
				t.Errorf("%s: the detail's advice %q, show's %q", it.Name, got[i], want[i])
			}
		}
		seen++
		hs.press("<esc>")
	}
	if seen == 0 {
		t.Fatal("no blob looked at")
	}
}

// The overview's legend names each subscription whole where the line has room for them all, and shortens only
// the long names, equally, where it has not.
func TestTheLegendKeepsNamesWholeWhereTheyFit(t *testing.T) {
	t.Parallel()
	names := []string{"WEBHOOKS", "BLOB-DELETIONS", "PUSH-NOTIFICATIONS", "THREAD-REPLIES", "FRIEND-REQUESTS", "STORAGE-LEDGER", "HOSTILE"}
	if c := legendRoom(names, 120); c != len("PUSH-NOTIFICATIONS") {
		t.Errorf("at 120 columns the names are cut at %d", c)
	}
	c := legendRoom(names, 80)
	total := 2 * (len(names) - 1)
	for _, n := range names {
		total += 2 + min(len(n), c)
	}
	if c < 4 || total > 80 || legendRoom(names, 80) != c {
		t.Errorf("at 80 columns: cap %d, %d columns wide", c, total)
	}
	if total+len(names) <= 80 {
		t.Errorf("at 80 columns the cap %d leaves room a longer cap would use", c)
	}
}
