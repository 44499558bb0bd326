package rules

import (
	"encoding/json"

	"github.com/deadletter/deadletter/internal/jsjson"
)

// Publish limits of the estate (MAX_EVENT_GRID_PUBLISH_BYTES, MAX_EVENT_GRID_PUBLISH_EVENT_COUNT).
const (
	MaxPublishBytes  = 512 << 10
	MaxPublishEvents = 5000
)

// Republished is an event the replay function republishes.
type Republished struct {
	Index int
	// ID is the id it is sent with: the original id and attempt+1.
	ID        string
	EventType string
	// Body is the serialized {data, dataVersion, eventType, id, subject} object.
	Body json.RawMessage
}

// Quarantined is an event the replay function refuses.
type Quarantined struct {
	Index int
	// ID is the id written into the quarantine copy: the original id, count stripped.
	ID        string
	EventType string
	Verdicts  VerdictSet
}

// PublishRequest is one sequential publish call.
type PublishRequest struct {
	// First and Last are indexes into Preview.Republish.
	First  int
	Last   int
	Events int
	Bytes  int
}

// Crash is a blob the replay function throws on: a value nested deeper than JSON.stringify can serialize before
// Node's stack overflows (see stack.go). The original is never deleted, so the blob is never consumed.
type Crash struct {
	// Depth is how deep the value that overflows nests.
	Depth int
	// Stage is where it throws: before anything is written, or after the quarantine copy.
	Stage CrashStage
}

// Preview is what the replay function will do with a root blob.
type Preview struct {
	// Crash is set when the function throws on the blob: nothing is republished or archived and the original
	// stays; only a quarantine copy written before the throw (Crash.Stage StagePublish) is still written.
	Crash *Crash
	// MayCrash is the depth of what the function serializes when it lies where the runtime decides (see
	// StackDepth): the preview is what happens if it does not crash.
	MayCrash  int
	Malformed bool
	// Republish and Quarantine partition the events whose fate is known.
	Republish  []Republished
	Quarantine []Quarantined
	// Unknown counts events whose fate needs the handler register (--handlers).
	Unknown         int
	PublishRequests []PublishRequest
	// QuarantineName is set when a quarantine copy is written; QuarantineBody is its content.
	QuarantineName string
	QuarantineBody []byte
	// ArchiveName is set when the original is archived (something was republished).
	ArchiveName string
	// DeleteOriginal is true on every path the handler completes.
	DeleteOriginal bool
}

// Plan predicts what the estate's replay function does with the root blob name holding payload, byte for
// byte: every body it would write or publish is what its JSON.stringify would produce (see jsjson).
func (c Config) Plan(name string, body []byte, p *Payload) Preview {
	if p.Malformed() {
		return Preview{Malformed: true, Republish: []Republished{}, Quarantine: []Quarantined{}, PublishRequests: []PublishRequest{},
			QuarantineName: QuarantinePrefix + name, QuarantineBody: body, DeleteOriginal: true}
	}
	js := make([]Judgement, len(p.Events))
	for i, ev := range p.Events {
		js[i] = c.Judge(ev.ID, ev.EventType)
	}
	crash, may := c.crashOf(p, js)
	if crash != nil && crash.Stage == StageQuarantine {
		// The function throws before it writes or deletes anything: the blob stays, and every redelivery and
		// every drain throws again.
		return Preview{Crash: crash, DeleteOriginal: false}
	}
	pv := Preview{Republish: []Republished{}, Quarantine: []Quarantined{}, PublishRequests: []PublishRequest{}, DeleteOriginal: true, MayCrash: may}
	vals := elementValues(body, p)
	var refused []byte
	for i, ev := range p.Events {
		j := js[i]
		switch {
		case j.Replayable():
			id := FormatID(j.Original, j.Attempt.Next(), c.Separator)
			pv.Republish = append(pv.Republish, Republished{Index: ev.Index, ID: id, EventType: ev.EventType, Body: publishBody(ev, vals[i], id)})
		case !j.Known():
			pv.Unknown++
		default:
			pv.Quarantine = append(pv.Quarantine, Quarantined{Index: ev.Index, ID: j.Original, EventType: ev.EventType, Verdicts: j.Verdicts})
			refused = appendElement(append(refused, ','), vals[i], j.Original)
		}
	}
	if len(refused) > 0 {
		refused[0] = '['
		pv.QuarantineName = QuarantinePrefix + name
		pv.QuarantineBody = append(refused, ']')
	}
	if crash != nil {
		// The quarantine copy is written; serializing a republished event throws: nothing is published, archived
		// or deleted.
		pv.Crash, pv.Republish, pv.DeleteOriginal = crash, []Republished{}, false
		return pv
	}
	if len(pv.Republish) > 0 {
		pv.PublishRequests = Chunk(pv.Republish)
		pv.ArchiveName = ArchivedPrefix + name
	}
	return pv
}

// Chunk splits republished events into sequential requests of at most MaxPublishEvents events and
// MaxPublishBytes bytes (each event's serialized length + 1, plus 1 for the array); a single larger event goes
// alone.
func Chunk(evs []Republished) []PublishRequest {
	var out []PublishRequest
	cur := PublishRequest{First: 0, Bytes: 1}
	for i, e := range evs {
		n := len(e.Body) + 1
		if cur.Events > 0 && (cur.Events+1 > MaxPublishEvents || cur.Bytes+n > MaxPublishBytes) {
			out = append(out, cur)
			cur = PublishRequest{First: i, Bytes: 1}
		}
		cur.Events++
		cur.Bytes += n
		cur.Last = i
	}
	if cur.Events > 0 {
		out = append(out, cur)
	}
	return out
}

// elementValues returns, for each event of the well-formed payload p, the object JSON.parse builds for it.
func elementValues(body []byte, p *Payload) []*jsjson.Value {
	out := make([]*jsjson.Value, len(p.Events))
	if root, err := jsjson.Parse(body); err == nil && root.Kind() == jsjson.Array && root.Len() == len(p.Events) {
		for i := range out {
			out[i] = root.Index(i)
		}
		return out
	}
	// The body is not the text p was parsed from: each event still holds its own element's text.
	for i, ev := range p.Events {
		if v, err := jsjson.Parse(ev.Raw); err == nil {
			out[i] = v
		}
	}
	return out
}

// publishBody is JSON.stringify({data, dataVersion, eventType, id, subject}) of the parsed event, with the
// republish id: the body the estate sends and whose length it counts against MaxPublishBytes.
func publishBody(ev Event, obj *jsjson.Value, id string) json.RawMessage {
	data, _ := obj.Get("data")
	b := make([]byte, 0, 96+len(ev.Data)+len(ev.DataVersion)+len(ev.EventType)+len(id)+len(ev.Subject))
	b = append(b, `{"data":`...)
	b = jsjson.AppendStringify(b, data)
	b = jsjson.AppendString(append(b, `,"dataVersion":`...), ev.DataVersion)
	b = jsjson.AppendString(append(b, `,"eventType":`...), ev.EventType)
	b = jsjson.AppendString(append(b, `,"id":`...), id)
	b = jsjson.AppendString(append(b, `,"subject":`...), ev.Subject)
	return append(b, '}')
}

// appendElement appends the element as the estate writes it into a quarantine copy: JSON.stringify of
// {...raw, id} — the parsed object, every field kept in its enumeration order (duplicates collapsed, array-index
// keys first) with the id replaced in place — except that a top-level __proto__ key is dropped (nested ones
// are ordinary data and stay).
func appendElement(dst []byte, obj *jsjson.Value, id string) []byte {
	dst = append(dst, '{')
	n := 0
	for _, m := range obj.Members() {
		if m.Key == "__proto__" {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(jsjson.AppendString(dst, m.Key), ':')
		if m.Key == "id" {
			dst = jsjson.AppendString(dst, id)
		} else {
			dst = jsjson.AppendStringify(dst, m.Val)
		}
	}
	return append(dst, '}')
}
