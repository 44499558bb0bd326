package twin

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// minutesFrom sums a subscription's counted minutes from a time on.
func minutesFrom(tw *Twin, sub string, from time.Time) (m Minute) {
	m.FailedBy = map[string]int64{}
	for _, x := range tw.st.Metrics[sub] {
		if x.At.Before(from) {
			continue
		}
		m.Succeeded += x.Succeeded
		m.Failed += x.Failed
		m.DeadLettered += x.DeadLettered
		m.Dropped += x.Dropped
		for k, n := range x.FailedBy {
			m.FailedBy[k] += n
		}
	}
	return m
}

// The twin's metrics are its deliveries, counted: over two hours of push-outage every delivery its account counts
// is a success in the minutes, the push subscription's failures fall inside its outage only and are all Busy,
// the other handlers fail nothing, and the witness names every subscription in capitals (the replay's trigger
// apart), as of the last complete minute.
func TestTheWitnessCountsEveryDelivery(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "push-outage")
	from := tw.Now()
	if !from.Equal(from.Truncate(time.Minute)) {
		t.Fatalf("the test wants a twin opened on a minute: %s", from)
	}
	var before int64 // deliveries at the very instant the twin opened: counted in its minute, and in the span before
	for _, s := range tw.script.Subs {
		before += minutesFrom(tw, s.Name, from).Succeeded
	}
	span, err := tw.Advance(context.Background(), from.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	delivered := -before
	for _, s := range tw.script.Subs {
		m := minutesFrom(tw, s.Name, from)
		delivered += m.Succeeded
		if s.Name == "push-notifications" {
			if m.Failed == 0 || m.FailedBy["Busy"] != m.Failed || m.DeadLettered == 0 {
				t.Errorf("push-notifications over its outage: %+v", m)
			}
			continue
		}
		if m.Failed != 0 || m.DeadLettered != 0 {
			t.Errorf("%s failed with its handler up: %+v", s.Name, m)
		}
	}
	if delivered != int64(span.Delivered) {
		t.Errorf("the minutes count %d delivered, the account %d", delivered, span.Delivered)
	}
	for _, x := range tw.st.Metrics["push-notifications"] {
		in := !x.At.Before(from.Add(PushOutageFrom)) && x.At.Before(from.Add(PushOutageFrom+time.Hour))
		if x.At.Before(from) {
			continue
		}
		if x.Failed > 0 && !in {
			t.Errorf("push-notifications failed at %s, outside its outage", x.At.Format("15:04"))
		}
		if x.Succeeded > 0 && in {
			t.Errorf("push-notifications delivered at %s, inside its outage", x.At.Format("15:04"))
		}
	}
	rep := tw.Witness(15 * time.Minute)
	if rep.Source != WitnessSource || !rep.AsOf.Equal(tw.Now().Truncate(time.Minute)) || rep.Window != 15*time.Minute {
		t.Errorf("report: %s as of %s over %s", rep.Source, rep.AsOf, rep.Window)
	}
	var names []string
	for _, h := range rep.Handlers {
		names = append(names, h.Subscription)
	}
	if want := []string{"PUSH-NOTIFICATIONS", "FRIEND-REQUESTS", "THREAD-REPLIES", "WEBHOOKS", "BLOB-DELETIONS", "STORAGE-LEDGER"}; !reflect.DeepEqual(names, want) {
		t.Errorf("handlers %v, want %v", names, want)
	}
	if len(rep.Replay) != 1 || rep.Replay[0].Subscription != ReplaySubscription || rep.Replay[0].Topic != DeadLetterTopicID {
		t.Errorf("replay: %+v", rep.Replay)
	}
	if h, _ := rep.HandlerOf("push-notifications"); h.Verdict != rules.HandlerHealthy || h.Topic != AppTopicID {
		t.Errorf("push-notifications an hour after its outage: %+v", h)
	}
}

// A twin keeps three hours of minutes, whatever it ran; a longer window reads what it keeps; the witness over the
// directory reads what the twin saved.
func TestTheWitnessKeepsThreeHours(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "push-outage")
	if _, err := tw.Advance(context.Background(), tw.Now().Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var last time.Time // (the minutes are let go of as the clock counts: from the newest minute counted)
	for _, ms := range tw.st.Metrics {
		if n := len(ms); n > 0 && ms[n-1].At.After(last) {
			last = ms[n-1].At
		}
	}
	if tw.Now().Sub(last) > 10*time.Minute {
		t.Fatalf("the twin counted nothing in its last ten minutes (the last at %v)", last)
	}
	keep := last.Add(-witnessKeep)
	for sub, ms := range tw.st.Metrics {
		if len(ms) == 0 || len(ms) > int(witnessKeep/time.Minute)+1 || ms[0].At.Before(keep) {
			t.Errorf("%s keeps %d minutes from %v", sub, len(ms), ms)
		}
	}
	if rep := tw.Witness(24 * time.Hour); rep.Window != witnessKeep {
		t.Errorf("a day's window over three hours kept: %s", rep.Window)
	}
	got := NewDirWitness(tw.root, 15*time.Minute).Witness(context.Background(), time.Now())
	if want := tw.Witness(15 * time.Minute); !reflect.DeepEqual(got, want) {
		t.Errorf("the directory's witness:\n%+v\nthe twin's:\n%+v", got, want)
	}
}

// Hostile counts are refused naming the field; the directory's witness says it could not read the twin.
func TestDamagedMetricsNameTheField(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "push-outage")
	tw.Close()
	good, err := os.ReadFile(tw.place.File(stateFile))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(ms []any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m["metrics"].(map[string]any)["push-notifications"].([]any))
		b, _ := json.Marshal(m)
		return b
	}
	for want, body := range map[string][]byte{
		`metrics["nope"]`: func() []byte {
			var m map[string]any
			json.Unmarshal(good, &m)
			m["metrics"].(map[string]any)["nope"] = []any{}
			b, _ := json.Marshal(m)
			return b
		}(),
		`metrics["push-notifications"][0]: a count below 0`: edit(func(ms []any) { ms[0].(map[string]any)["failed"] = -1 }),
		`metrics["push-notifications"][1].at`:               edit(func(ms []any) { ms[1].(map[string]any)["at"] = ms[0].(map[string]any)["at"] }),
		`metrics["push-notifications"][0].at 8000`:          edit(func(ms []any) { ms[0].(map[string]any)["at"] = "8000-01-01T00:00:00Z" }),
	} {
		writeState(t, tw, body)
		if _, err := Open(context.Background(), tw.root, "test"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state with %s: %v", want, err)
		}
		rep := NewDirWitness(tw.root, 15*time.Minute).Witness(context.Background(), time.Now())
		if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Err, want) || len(rep.Handlers) != 0 {
			t.Errorf("the witness of a twin with %s: %+v", want, rep)
		}
	}
}
