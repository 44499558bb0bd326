package main

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// The filters on what is inside the events select exactly the blobs holding such an event: the answer is worked
// out here from the incident's own bytes with encoding/json (not with the rules under test), then ls, drain
// --dry-run and restore --all --dry-run must agree with it.
func TestFiltersOnEventsSelectTheBlobsHoldingSuchAnEvent(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	c, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		ID, Subject, EventType string
		Data                   map[string]any
	}
	blobs := map[string][]ev{}
	err = c.List(context.Background(), "", func(p store.Page) error {
		for _, bi := range p.Blobs {
			b, err := c.Read(context.Background(), bi.Name, store.MaxBlobBytes)
			if err != nil {
				return err
			}
			var evs []ev
			_ = json.Unmarshal(b.Body, &evs) // (a malformed one holds none this oracle can read)
			blobs[bi.Name] = evs
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var user string // one push notification's user, from the incident
	for _, evs := range blobs {
		for _, e := range evs {
			if u, ok := e.Data["userId"].(string); ok && e.EventType == "ProcessPushNotification" && user == "" {
				user = u
			}
		}
	}
	if user == "" {
		t.Fatal("the incident holds no push notification with a userId")
	}
	want := func(match func(ev) bool) map[string]bool {
		m := map[string]bool{}
		for n, evs := range blobs {
			for _, e := range evs {
				if match(e) {
					m[n] = true
				}
			}
		}
		return m
	}
	for _, tc := range []struct {
		q     string
		match func(ev) bool
	}{
		{"type:ProcessPushNotification data.userId:=" + strings.ToUpper(user), func(e ev) bool {
			return e.EventType == "ProcessPushNotification" && strings.EqualFold(e.Data["userId"].(string), user)
		}},
		{"type:=processpushnotification data.userId:u-a", func(e ev) bool {
			u, _ := e.Data["userId"].(string)
			return e.EventType == "ProcessPushNotification" && strings.Contains(strings.ToLower(u), "u-a")
		}},
		{"subject:/PUSH-notifications/ -type:=DeliverWebhook", func(e ev) bool { return strings.Contains(strings.ToLower(e.Subject), "/push-notifications/") }},
	} {
		w := want(tc.match)
		if len(w) == 0 {
			t.Fatalf("%q: the incident holds no such event: the test proves nothing", tc.q)
		}
		got := map[string]bool{}
		for _, b := range lsJSONOf(t, "--dir", dir, "--filter", tc.q).Blobs {
			got[b["name"].(string)] = true
		}
		if !maps.Equal(got, w) {
			t.Errorf("ls --filter %q: %d blobs, want the %d holding such an event:\ngot  %v\nwant %v", tc.q, len(got), len(w), got, w)
		}
		// The actions select the same in their panes.
		ls := lsJSONOf(t, "--dir", dir)
		pane := map[string]string{}
		for _, b := range ls.Blobs {
			pane[b["name"].(string)] = b["pane"].(string)
		}
		for _, a := range []struct {
			pane string
			args []string
		}{{"stranded", []string{"drain", "--dry-run"}}, {"quarantine", []string{"restore", "--all", "--dry-run"}}} {
			in := map[string]bool{}
			for n := range w {
				if pane[n] == a.pane {
					in[n] = true
				}
			}
			out, errs, _ := runCmd(t, append(a.args, "--dir", dir, "--filter", tc.q, "--json")...)
			if names := resultNames(t, out); len(in) > 0 && !maps.Equal(names, in) {
				t.Errorf("%v --filter %q takes %v, want %v\n%s", a.args, tc.q, names, in, errs)
			}
		}
	}
	// The same id, with or without its attempt suffix.
	var id string
	for n, evs := range blobs {
		if strings.HasPrefix(n, "quarantine/") && len(evs) > 0 && evs[0].ID != "" {
			id = evs[0].ID
			break
		}
	}
	orig, _, _ := strings.Cut(id, "|")
	for _, q := range []string{"id:=" + orig, "id:=" + orig + "|9"} {
		w := want(func(e ev) bool { o, _, _ := strings.Cut(e.ID, "|"); return o == orig })
		got := map[string]bool{}
		for _, b := range lsJSONOf(t, "--dir", dir, "--filter", q).Blobs {
			got[b["name"].(string)] = true
		}
		if !maps.Equal(got, w) {
			t.Errorf("ls --filter %q: %v, want %v", q, got, w)
		}
	}
}
