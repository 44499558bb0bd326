package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/jsjson"
)

// Event is one dead-lettered event as the estate's schema sees it, plus Event Grid's diagnostics. Strings are
// decoded as JSON.parse decodes them (WTF-8: a lone surrogate escape is kept; invalid UTF-8 is U+FFFD).
type Event struct {
	Index       int
	ID          string
	Subject     string
	EventType   string
	DataVersion string
	// Data is the event's data as raw JSON text (as it stands in the payload); HasData is false when the field
	// is absent.
	Data    json.RawMessage
	HasData bool

	DeadLetterReason        string
	DeliveryAttempts        *int64
	LastDeliveryOutcome     string
	LastHTTPStatusCode      *int64
	PublishTime             string
	LastDeliveryAttemptTime string

	// Raw is the element exactly as it stands in the payload, every field kept.
	Raw json.RawMessage
}

// Payload is a parsed blob body. A malformed payload (Err != nil) is quarantined whole by the estate; its Events
// are then a best-effort reading (CloudEvents' lowercase names included) for an operator to look at.
type Payload struct {
	Events []Event
	Err    *MalformedError
	// Depth is the nesting depth of the payload's text: 1 for [], 2 for [{}] and so on (a scalar is 0), over the
	// part read before any syntax error.
	Depth int
	// Deep holds, for a well-formed payload deeper than deepFloor, how deep each event is where the estate
	// serializes it (see EventDepth); nil otherwise — nothing shallower can come near a stack limit.
	Deep []EventDepth
}

// EventDepth is how deep one event nests in the two values the replay function hands to JSON.stringify, counted
// as the payload's Depth is (the array the value sits in included), on the value JSON.parse built (a duplicate
// key's discarded value does not count).
type EventDepth struct {
	// Full is the whole element inside the quarantine copy's array: what a refused event costs.
	Full int
	// Envelope is {data, dataVersion, eventType, id, subject} inside the published array: what a republished event
	// costs. Only data can nest, so a deep field the schema does not keep costs nothing here.
	Envelope int
}

// deepFloor is the payload depth past which each event's serialized depths are worked out (a JSON.parse of each
// element); a --node-stack-depth may not go below it.
const deepFloor = 64

// Malformed reports whether the estate's schema refuses the payload.
func (p *Payload) Malformed() bool { return p.Err != nil }

// MalformedError says precisely why a payload fails the estate's schema.
type MalformedError struct {
	// Offset is the byte offset of a JSON syntax error, or -1.
	Offset int64
	// Element is the index of the array element that broke the schema, or -1.
	Element int
	// Field is the field that broke the schema, or "".
	Field string
	Msg   string
}

func (e *MalformedError) Error() string {
	switch {
	case e.Offset >= 0:
		return fmt.Sprintf("JSON syntax error at byte offset %d: %s", e.Offset, e.Msg)
	case e.Element >= 0 && e.Field != "":
		return fmt.Sprintf("element %d, field %q: %s", e.Element, e.Field, e.Msg)
	case e.Element >= 0:
		return fmt.Sprintf("element %d: %s", e.Element, e.Msg)
	}
	return e.Msg
}

// ParsePayload validates body against the estate's schema exactly as its JavaScript does
// (Buffer.toString("utf8"), JSON.parse, then the schema): a JSON array of objects, each with string id,
// subject, eventType and dataVersion and a data key (any value, null included; any other field kept). Keys are
// matched as JSON.parse sees them: case-sensitive, escapes decoded, the last duplicate winning. One bad element
// makes the whole payload malformed, as it does for the estate. There is no depth limit: JSON.parse has none.
//
// It runs on every blob during hydration, so it builds no tree: one validating scan, then a walk over each
// element's top-level members. It never panics on any input.
func ParsePayload(body []byte) *Payload {
	p := &Payload{}
	res, err := jsjson.Scan(body)
	p.Depth = res.Depth
	if err != nil {
		p.Err = syntaxError(err)
		// A byte order mark is JSON.parse's error at offset 0, but what follows may still be worth showing.
		if rest, ok := bytes.CutPrefix(body, bom); ok {
			if r, err := jsjson.Scan(rest); err == nil {
				p.Events = lenientEvents(rest, r)
			}
		}
		return p
	}
	if res.TopKind != jsjson.Array {
		p.Err = &MalformedError{Offset: -1, Element: -1, Msg: "not an array: the payload is " + topWords[res.TopKind]}
		p.Events = lenientEvents(body, res)
		return p
	}
	p.Events = make([]Event, 0, len(res.Elements))
	for i, sp := range res.Elements {
		ev, err := strictEvent(i, body[sp.Start:sp.End])
		if err != nil {
			p.Err = err
			p.Events = lenientEvents(body, res)
			return p
		}
		p.Events = append(p.Events, ev)
	}
	if p.Depth > deepFloor {
		p.Deep = eventDepths(p.Events)
	}
	return p
}

// eventDepths measures, for each event, the values JavaScript holds (the text's depth overstates them when a
// duplicate key threw a deeper value away).
func eventDepths(evs []Event) []EventDepth {
	out := make([]EventDepth, len(evs))
	for i, ev := range evs {
		v, err := jsjson.Parse(ev.Raw)
		if err != nil {
			continue
		}
		full := 1 // the element itself, an object
		for _, m := range v.Members() {
			if m.Key != "__proto__" { // a top-level __proto__ is not copied into the quarantine copy
				full = max(full, 1+jsjson.Depth(m.Val))
			}
		}
		data, _ := v.Get("data")
		out[i] = EventDepth{Full: 1 + full, Envelope: 2 + jsjson.Depth(data)}
	}
	return out
}

var bom = []byte("\xef\xbb\xbf")

var topWords = [...]string{jsjson.Null: "null", jsjson.Bool: "a JSON boolean", jsjson.Number: "a JSON number", jsjson.String: "a JSON string",
	jsjson.Array: "a JSON array", jsjson.Object: "a JSON object"}

func syntaxError(err error) *MalformedError {
	var se *jsjson.SyntaxError
	if errors.As(err, &se) {
		return &MalformedError{Offset: se.Offset, Element: -1, Msg: se.Msg}
	}
	return &MalformedError{Offset: -1, Element: -1, Msg: err.Error()}
}

// jsonKind is the type of a JSON value, read from its first byte.
type jsonKind uint8

const (
	kindNothing jsonKind = iota
	kindObject
	kindArray
	kindString
	kindBool
	kindNull
	kindNumber
)

var kindWords = [...]string{"nothing", "an object", "an array", "a string", "a boolean", "null", "a number"}

// String names the kind in an error message: "want a string, got a number".
func (k jsonKind) String() string { return kindWords[k] }

// kindOfValue is the kind of a parsed value, in the same words.
func kindOfValue(v *jsjson.Value) jsonKind {
	return [...]jsonKind{jsjson.Null: kindNull, jsjson.Bool: kindBool, jsjson.Number: kindNumber, jsjson.String: kindString,
		jsjson.Array: kindArray, jsjson.Object: kindObject}[v.Kind()]
}

func kindOf(raw []byte) jsonKind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return kindNothing
	}
	switch raw[0] {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	}
	return kindNumber
}

// eventFields are the top-level members of one element that the estate's schema and the screens read.
type eventFields struct {
	id, subject, eventType, dataVersion, data                                                                         []byte
	deadLetterReason, deliveryAttempts, lastDeliveryOutcome, lastHTTPStatusCode, publishTime, lastDeliveryAttemptTime []byte
}

// slot is where a member of that name goes (nil for members nobody reads).
func (f *eventFields) slot(key string) *[]byte {
	switch key {
	case "id":
		return &f.id
	case "subject":
		return &f.subject
	case "eventType":
		return &f.eventType
	case "dataVersion":
		return &f.dataVersion
	case "data":
		return &f.data
	case "deadLetterReason":
		return &f.deadLetterReason
	case "deliveryAttempts":
		return &f.deliveryAttempts
	case "lastDeliveryOutcome":
		return &f.lastDeliveryOutcome
	case "lastHttpStatusCode":
		return &f.lastHTTPStatusCode
	case "publishTime":
		return &f.publishTime
	case "lastDeliveryAttemptTime":
		return &f.lastDeliveryAttemptTime
	}
	return nil
}

// get looks a diagnostic up by its JSON name, for the code shared with the lenient reading.
func (f *eventFields) get(name string) ([]byte, bool) {
	p := f.slot(name)
	if p == nil || *p == nil {
		return nil, false
	}
	return *p, true
}

// strictEvent applies the estate's schema to one element, whose text Scan has validated.
func strictEvent(i int, raw []byte) (Event, *MalformedError) {
	ev := Event{Index: i, Raw: raw}
	if k := kindOf(raw); k != kindObject {
		return ev, &MalformedError{Offset: -1, Element: i, Msg: "want an object, got " + k.String()}
	}
	var f eventFields
	jsjson.Fields(raw, func(key string, val []byte) {
		if p := f.slot(key); p != nil {
			*p = val // a repeated key: the last one wins, as in JSON.parse
		}
	})
	for _, r := range [...]struct {
		name string
		raw  []byte
		dst  *string
	}{{"id", f.id, &ev.ID}, {"subject", f.subject, &ev.Subject}, {"eventType", f.eventType, &ev.EventType}, {"dataVersion", f.dataVersion, &ev.DataVersion}} {
		if r.raw == nil {
			return ev, &MalformedError{Offset: -1, Element: i, Field: r.name, Msg: "missing (required string)"}
		}
		if k := kindOf(r.raw); k != kindString {
			return ev, &MalformedError{Offset: -1, Element: i, Field: r.name, Msg: "want a string, got " + k.String()}
		}
		*r.dst = jsjson.Unquote(r.raw)
	}
	if f.data == nil {
		return ev, &MalformedError{Offset: -1, Element: i, Field: "data", Msg: "missing (required; any value, null included)"}
	}
	ev.Data, ev.HasData = f.data, true
	diagnostics(&ev, f.get)
	return ev, nil
}

// diagnostics fills Event Grid's optional fields. Their types are not part of the estate's schema, so a field of
// an unexpected type is shown as its raw text rather than refused.
func diagnostics(ev *Event, get func(string) ([]byte, bool)) {
	str := func(name string) string {
		v, ok := get(name)
		if !ok {
			return ""
		}
		return display(v)
	}
	num := func(name string) *int64 {
		v, ok := get(name)
		if !ok {
			return nil
		}
		return integer(v)
	}
	ev.DeadLetterReason = str("deadLetterReason")
	ev.DeliveryAttempts = num("deliveryAttempts")
	ev.LastDeliveryOutcome = str("lastDeliveryOutcome")
	ev.LastHTTPStatusCode = num("lastHttpStatusCode")
	ev.PublishTime = str("publishTime")
	ev.LastDeliveryAttemptTime = str("lastDeliveryAttemptTime")
}

// display is a value as a screen shows it: a string decoded, anything else as its raw text.
func display(v []byte) string {
	if kindOf(v) == kindString {
		return jsjson.Unquote(v)
	}
	return string(bytes.TrimSpace(v))
}

// integer reads a count such as deliveryAttempts: a JSON number (or a string holding one) with an integral
// value, else nil.
func integer(v []byte) *int64 {
	s := strings.TrimSpace(display(v))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &n
	}
	// 10.0 and 1e1 are the number 10 to JavaScript.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		n := int64(f)
		return &n
	}
	return nil
}

// lenientEvents reads whatever events a malformed payload still holds, so an operator sees its fields: any
// object in a top-level array (or a lone top-level object), names matched exactly first and then
// case-insensitively (CloudEvents writes them in lowercase), and CloudEvents' "type" standing in for eventType.
// res is Scan's successful result over body; nothing here recurses or limits the depth.
func lenientEvents(body []byte, res jsjson.ScanResult) []Event {
	var elems []jsjson.Span
	switch res.TopKind {
	case jsjson.Array:
		elems = res.Elements
	case jsjson.Object:
		start := len(body) - len(bytes.TrimLeft(body, " \t\r\n"))
		elems = []jsjson.Span{{Start: start, End: len(bytes.TrimRight(body, " \t\r\n"))}}
	default:
		return nil
	}
	type member struct {
		key string
		val []byte
	}
	var out []Event
	var members []member
	for i, sp := range elems {
		raw := body[sp.Start:sp.End]
		if kindOf(raw) != kindObject {
			continue
		}
		members = members[:0]
		jsjson.Fields(raw, func(key string, val []byte) { members = append(members, member{key, val}) })
		get := func(name string) ([]byte, bool) {
			for j := len(members) - 1; j >= 0; j-- { // the last duplicate wins
				if members[j].key == name {
					return members[j].val, true
				}
			}
			for j := len(members) - 1; j >= 0; j-- {
				if strings.EqualFold(members[j].key, name) {
					return members[j].val, true
				}
			}
			return nil, false
		}
		str := func(names ...string) string {
			for _, n := range names {
				if v, ok := get(n); ok {
					return display(v)
				}
			}
			return ""
		}
		ev := Event{Index: i, Raw: raw, ID: str("id"), Subject: str("subject"), EventType: str("eventType", "type"), DataVersion: str("dataVersion", "specversion")}
		ev.Data, ev.HasData = get("data")
		diagnostics(&ev, get)
		out = append(out, ev)
	}
	return out
}
