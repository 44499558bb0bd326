package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
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
// Node's stack overflows. Nothing is written or deleted, so the blob is never consumed.
type Crash struct {
	// Depth is the payload's nesting depth.
	Depth int
}

// MaxStringifyDepth is the deepest nesting the prediction trusts JSON.stringify with: Node overflows its stack at
// roughly 4,100 (Node 20) to 4,500 (Node 24) levels, so a payload nested deeper than this is predicted to crash.
const MaxStringifyDepth = 4000

// Preview is what the replay function will do with a root blob.
type Preview struct {
	// Crash is set when the function throws on the blob: then nothing else in the preview happens.
	Crash     *Crash
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

// Plan predicts what the estate's replay function does with the root blob name holding payload.
func (c Config) Plan(name string, body []byte, p *Payload) Preview {
	pv := Preview{Republish: []Republished{}, Quarantine: []Quarantined{}, PublishRequests: []PublishRequest{}, DeleteOriginal: true}
	if p.Malformed() {
		pv.Malformed = true
		pv.QuarantineName = QuarantinePrefix + name
		pv.QuarantineBody = body
		return pv
	}
	var refused []json.RawMessage
	for _, ev := range p.Events {
		j := c.Judge(ev.ID, ev.EventType)
		switch {
		case j.Replayable():
			id := FormatID(j.Original, j.Attempt.Next(), c.Separator)
			pv.Republish = append(pv.Republish, Republished{Index: ev.Index, ID: id, EventType: ev.EventType, Body: publishBody(ev, id)})
		case !j.Known():
			pv.Unknown++
		default:
			pv.Quarantine = append(pv.Quarantine, Quarantined{Index: ev.Index, ID: j.Original, EventType: ev.EventType, Verdicts: j.Verdicts})
			refused = append(refused, withID(ev.Raw, j.Original))
		}
	}
	if len(refused) > 0 {
		pv.QuarantineName = QuarantinePrefix + name
		pv.QuarantineBody = jsonArray(refused)
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

// publishBody serializes the five fields a republish carries, in the estate's order, as JSON.stringify would.
func publishBody(ev Event, id string) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	if ev.HasData {
		b.WriteString(`"data":`)
		compactInto(&b, ev.Data)
		b.WriteByte(',')
	}
	for i, kv := range [][2]string{{"dataVersion", ev.DataVersion}, {"eventType", ev.EventType}, {"id", id}, {"subject", ev.Subject}} {
		if i > 0 {
			b.WriteByte(',')
		}
		jsString(&b, kv[0])
		b.WriteByte(':')
		jsString(&b, kv[1])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func compactInto(b *bytes.Buffer, raw json.RawMessage) {
	if err := json.Compact(b, raw); err != nil {
		b.Write(bytes.TrimSpace(raw))
	}
}

// jsString writes s as JSON.stringify does: only quote, backslash and C0 controls are escaped.
func jsString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError && size == 1:
			b.WriteString("\ufffd")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

func jsonArray(elems []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// withID rewrites a raw event object with its id replaced, every other field kept in place (as the estate's
// {...raw, id} does): diagnostics must survive into the copy an operator opens.
func withID(raw json.RawMessage, id string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return raw
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	var idb bytes.Buffer
	jsString(&idb, id)
	vals["id"] = idb.Bytes()
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		jsString(&b, k)
		b.WriteByte(':')
		compactInto(&b, vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
