package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Publish limits of the estate (MAX_EVENT_GRID_PUBLISH_BYTES, MAX_EVENT_GRID_PUBLISH_EVENT_COUNT).
const (
	MaxPublishBytes  = 512 << 10
	MaxPublishEvents = 5000
)

// Republished is an event the replay function republishes.
type Republished struct {
	Index int `json:"index"`
	// ID is the id it is sent with: the original id and attempt+1.
	ID        string `json:"id"`
	EventType string `json:"eventType"`
	// Body is the serialized {data, dataVersion, eventType, id, subject} object.
	Body json.RawMessage `json:"-"`
}

// Quarantined is an event the replay function refuses.
type Quarantined struct {
	Index int `json:"index"`
	// ID is the id written into the quarantine copy: the original id, count stripped.
	ID        string    `json:"id"`
	EventType string    `json:"eventType"`
	Verdicts  []Verdict `json:"verdicts"`
}

// PublishRequest is one sequential publish call.
type PublishRequest struct {
	// First and Last are indexes into Preview.Republish.
	First  int `json:"first"`
	Last   int `json:"last"`
	Events int `json:"events"`
	Bytes  int `json:"bytes"`
}

// Preview is what the replay function will do with a root blob.
type Preview struct {
	Malformed bool `json:"malformed"`
	// Republish and Quarantine partition the events whose fate is known.
	Republish  []Republished `json:"republish"`
	Quarantine []Quarantined `json:"quarantine"`
	// Unknown counts events whose fate needs the handler register (--handlers).
	Unknown         int              `json:"unknown,omitempty"`
	PublishRequests []PublishRequest `json:"publishRequests"`
	// QuarantineName is set when a quarantine copy is written; QuarantineBody is its content.
	QuarantineName string `json:"quarantineName,omitempty"`
	QuarantineBody []byte `json:"-"`
	// ArchiveName is set when the original is archived (something was republished).
	ArchiveName string `json:"archiveName,omitempty"`
	// DeleteOriginal is true on every path the handler completes.
	DeleteOriginal bool `json:"deleteOriginal"`
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
			id := FormatID(j.Original, j.Attempt+1, c.Separator)
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
		pv.PublishRequests = chunk(pv.Republish)
		pv.ArchiveName = ArchivedPrefix + name
	}
	return pv
}

// chunk splits republished events into sequential requests of at most MaxPublishEvents events and
// MaxPublishBytes bytes (each event's serialized length + 1, plus 1 for the array); a single larger event goes
// alone.
func chunk(evs []Republished) []PublishRequest {
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

// Resuming is an event a restore will start moving again.
type Resuming struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	EventType string `json:"eventType"`
}

// RestorePlan is what restoring a quarantine blob will do, judged with the same bars the replay function will
// apply to the restored copy.
type RestorePlan struct {
	Malformed bool `json:"malformed"`
	// Resume holds the events the replay will republish (the ones the cap stopped).
	Resume []Resuming `json:"resume"`
	// Requarantine holds the events the replay will quarantine again on sight.
	Requarantine []Quarantined `json:"requarantine"`
	// Unknown counts events whose fate needs --handlers.
	Unknown int `json:"unknown,omitempty"`
	// Target is the root name the restored copy would get now.
	Target string `json:"target"`
	// Refusal says why restore refuses without --force ("" when it goes ahead).
	Refusal string `json:"refusal,omitempty"`
	// Body is the restored copy: the quarantined bytes with every id's count stripped.
	Body []byte `json:"-"`
	// Stripped counts ids that still carried a count and were stripped.
	Stripped int `json:"stripped"`
}

// PlanRestore predicts a restore of quarantine blob name with body parsed as p. The restored copy's events are
// judged exactly as the replay function will judge them at the root: at attempt 0, after stripping.
func (c Config) PlanRestore(name string, body []byte, p *Payload, now time.Time) RestorePlan {
	rp := RestorePlan{Resume: []Resuming{}, Requarantine: []Quarantined{}, Body: body}
	target, err := RestoreTarget(name, now)
	if err != nil {
		rp.Refusal = err.Error()
		return rp
	}
	rp.Target = target
	if p.Malformed() {
		rp.Malformed = true
		rp.Refusal = "the payload is malformed (" + p.Err.Error() + "): the replay quarantines it again on sight"
		return rp
	}
	stripped := make([]json.RawMessage, len(p.Events))
	for i, ev := range p.Events {
		id := ParseID(ev.ID, c.Separator)
		stripped[i] = ev.Raw
		if id.Original != ev.ID {
			rp.Stripped++
			stripped[i] = withID(ev.Raw, id.Original)
		}
		j := c.Judge(id.Original, ev.EventType)
		switch {
		case j.Replayable():
			rp.Resume = append(rp.Resume, Resuming{Index: ev.Index, ID: id.Original, EventType: ev.EventType})
		case !j.Known():
			rp.Unknown++
		default:
			rp.Requarantine = append(rp.Requarantine, Quarantined{Index: ev.Index, ID: id.Original, EventType: ev.EventType, Verdicts: j.Verdicts})
		}
	}
	if rp.Stripped > 0 {
		rp.Body = jsonArray(stripped)
	}
	switch {
	case len(p.Events) == 0:
		rp.Refusal = "the blob holds no events"
	case len(rp.Resume) == 0 && rp.Unknown == 0:
		rp.Refusal = fmt.Sprintf("no event would resume: all %d would be quarantined again (%s)", len(rp.Requarantine), summarizeVerdicts(rp.Requarantine))
	}
	return rp
}

func summarizeVerdicts(q []Quarantined) string {
	counts := map[Verdict]int{}
	for _, e := range q {
		counts[e.Verdicts[0]]++
	}
	var parts []string
	for _, v := range AllVerdicts {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

// RestoreTarget is the root name a restored copy gets: the quarantine name without its prefix, with
// .restored-<UTC yyyymmddThhmmssZ> before .json (appended when there is no .json).
func RestoreTarget(quarantineName string, now time.Time) (string, error) {
	if !strings.HasPrefix(quarantineName, QuarantinePrefix) {
		return "", fmt.Errorf("%q is not under %s", quarantineName, QuarantinePrefix)
	}
	base := strings.TrimPrefix(quarantineName, QuarantinePrefix)
	if base == "" || !IsRoot(base) {
		return "", fmt.Errorf("restoring %q would not land at the container root", quarantineName)
	}
	stamp := ".restored-" + now.UTC().Format("20060102T150405Z")
	if strings.HasSuffix(base, ".json") {
		return strings.TrimSuffix(base, ".json") + stamp + ".json", nil
	}
	return base + stamp, nil
}

// AlternateTarget is the n-th fallback when target (or its archived/ or quarantine/ copy) already exists.
func AlternateTarget(target string, n int) string {
	if strings.HasSuffix(target, ".json") {
		return strings.TrimSuffix(target, ".json") + "-" + strconv.Itoa(n) + ".json"
	}
	return target + "-" + strconv.Itoa(n)
}

// PrettyJSON indents a payload for reading, or returns it as it is when it is not JSON.
func PrettyJSON(body []byte, w io.Writer) {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		w.Write(body)
		return
	}
	w.Write(b.Bytes())
}
