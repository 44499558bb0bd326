package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
)

// The JSON shapes of SPEC §5. Scripts depend on these names; tests assert them.
type lsJSON struct {
	Container string     `json:"container"`
	Now       string     `json:"now"`
	Blobs     []blobJSON `json:"blobs"`
}

type blobJSON struct {
	Name             string                 `json:"name"`
	Pane             replay.Pane            `json:"pane"`
	Size             int64                  `json:"size"`
	LastModified     string                 `json:"lastModified"`
	AgeSeconds       int64                  `json:"ageSeconds"`
	ExpiresAt        string                 `json:"expiresAt"`
	Events           int                    `json:"events"`
	Malformed        bool                   `json:"malformed"`
	Error            *string                `json:"error"`
	MaxReplayAttempt int                    `json:"maxReplayAttempt"`
	Reasons          map[string]int         `json:"reasons"`
	Outcomes         map[string]int         `json:"outcomes"`
	Verdicts         map[replay.Verdict]int `json:"verdicts"`
}

type eventJSON struct {
	Index                   int              `json:"index"`
	ID                      string           `json:"id"`
	OriginalID              string           `json:"originalId"`
	ReplayAttempt           int              `json:"replayAttempt"`
	EventType               string           `json:"eventType"`
	Subject                 string           `json:"subject"`
	DeadLetterReason        string           `json:"deadLetterReason"`
	DeliveryAttempts        *int64           `json:"deliveryAttempts"`
	LastDeliveryOutcome     string           `json:"lastDeliveryOutcome"`
	LastHTTPStatusCode      *int64           `json:"lastHttpStatusCode"`
	PublishTime             string           `json:"publishTime"`
	LastDeliveryAttemptTime string           `json:"lastDeliveryAttemptTime"`
	Verdicts                []replay.Verdict `json:"verdicts"`
	Uncountable             bool             `json:"uncountable"`
}

// showJSON is the ls fields with the event list as "events" (a field of the outer struct wins over the
// embedded count of the same name) and the count as "eventCount".
type showJSON struct {
	blobJSON
	EventCount int                 `json:"eventCount"`
	EventList  []eventJSON         `json:"events"`
	Preview    *replay.Preview     `json:"preview,omitempty"`
	Restore    *replay.RestorePlan `json:"restore,omitempty"`
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func toBlobJSON(it *replay.Item) blobJSON {
	b := blobJSON{Name: it.Name, Pane: it.Pane, Size: it.Size, LastModified: rfc3339(it.LastModified), AgeSeconds: int64(it.Age / time.Second),
		ExpiresAt: rfc3339(it.ExpiresAt), Reasons: map[string]int{}, Outcomes: map[string]int{}, Verdicts: map[replay.Verdict]int{}}
	if s := it.Summary; s != nil {
		b.Events, b.Malformed, b.MaxReplayAttempt = s.Events, s.Malformed, s.MaxReplayAttempt
		b.Reasons, b.Outcomes, b.Verdicts = s.Reasons.Map(), s.Outcomes.Map(), s.Verdicts.Map()
		if s.Error != "" {
			b.Error = &s.Error
		}
	}
	if it.ReadErr != "" {
		e := it.ReadErr
		b.Error = &e
	}
	return b
}

func toShowJSON(d *replay.Detail) showJSON {
	out := showJSON{blobJSON: toBlobJSON(&d.Item), EventList: []eventJSON{}, Preview: d.Preview, Restore: d.Restore}
	out.EventCount = out.Events
	for i, ev := range d.Payload.Events {
		e := eventJSON{Index: ev.Index, ID: ev.ID, EventType: ev.EventType, Subject: ev.Subject, DeadLetterReason: ev.DeadLetterReason,
			DeliveryAttempts: ev.DeliveryAttempts, LastDeliveryOutcome: ev.LastDeliveryOutcome, LastHTTPStatusCode: ev.LastHTTPStatusCode,
			PublishTime: ev.PublishTime, LastDeliveryAttemptTime: ev.LastDeliveryAttemptTime, Verdicts: []replay.Verdict{}}
		if i < len(d.Judgements) {
			j := d.Judgements[i]
			e.OriginalID, e.ReplayAttempt, e.Uncountable = j.Original, j.Attempt, j.Uncountable
		}
		e.Verdicts, _ = d.EventVerdicts(i)
		out.EventList = append(out.EventList, e)
	}
	return out
}

func writeJSON(io stdio, v any) error {
	enc := json.NewEncoder(io.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeShow prints one blob for a human. Every string from the blob goes through replay.Printable.
func writeShow(io stdio, d *replay.Detail, cfg replay.Config) {
	p := replay.Printable
	w := io.out
	fmt.Fprintf(w, "%s\n", p(d.Name))
	fmt.Fprintf(w, "  pane        %s (age %s; TTL %s)\n", d.Pane, replay.HumanDuration(d.Age), cfg.TTL)
	fmt.Fprintf(w, "  modified    %s   deleted by lifecycle at %s (in %s)\n", rfc3339(d.LastModified), rfc3339(d.ExpiresAt), replay.HumanDuration(d.ExpiresAt.Sub(d.LastModified.Add(d.Age))))
	fmt.Fprintf(w, "  size        %d bytes   etag %s   drained %s times\n", d.Size, p(d.ETag), drainCount(d.Metadata))
	if d.ReadErr != "" {
		fmt.Fprintf(w, "  NOT READ    %s\n", p(d.ReadErr))
		return
	}
	if d.Payload.Malformed() {
		fmt.Fprintf(w, "  MALFORMED   %s\n", p(d.Payload.Err.Error()))
		fmt.Fprintf(w, "              the replay quarantines the whole payload; the fields below are a best-effort reading\n")
	}
	fmt.Fprintf(w, "  events      %d\n\n", len(d.Payload.Events))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tID\tATTEMPT\tEVENT TYPE\tSUBJECT\tREASON\tOUTCOME\tHTTP\tVERDICTS\n")
	for i, ev := range d.Payload.Events {
		attempt := ""
		if i < len(d.Judgements) {
			attempt = fmt.Sprint(d.Judgements[i].Attempt)
			if d.Judgements[i].Uncountable {
				attempt = "0 UNCOUNTABLE"
			}
		}
		verdicts := d.VerdictLabel(i)
		http := ""
		if ev.LastHTTPStatusCode != nil {
			http = fmt.Sprint(*ev.LastHTTPStatusCode)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Index, p(ev.ID), attempt, p(ev.EventType), p(ev.Subject),
			p(ev.DeadLetterReason), p(ev.LastDeliveryOutcome), http, verdicts)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, line := range replay.Explain(d, cfg) {
		fmt.Fprintln(w, line)
	}
}

func drainCount(meta map[string]string) string {
	if v, ok := store.MetaGet(meta, "drainCount"); ok {
		return replay.Printable(v)
	}
	return "0"
}
