package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Event is one dead-lettered event as the estate's schema sees it, plus Event Grid's diagnostics.
type Event struct {
	Index       int
	ID          string
	Subject     string
	EventType   string
	DataVersion string
	// Data is the event's data as raw JSON; HasData is false when the field is absent.
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
}

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

// ParsePayload validates body against the estate's schema: a JSON array of objects, each with string id,
// subject, eventType and dataVersion and a data key (any value, null included; any other field kept). One bad element makes the
// whole payload malformed, as it does for the estate. It never panics on any input.
func ParsePayload(body []byte) *Payload {
	p := &Payload{}
	if bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		p.Err = &MalformedError{Offset: 0, Element: -1, Msg: "a byte order mark (EF BB BF) stands before the JSON; JSON.parse refuses it"}
		p.Events = lenientEvents(body[3:])
		return p
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		p.Err = jsonError(err, -1)
		if p.Err.Offset < 0 && p.Err.Element < 0 {
			p.Err.Msg = "not an array: " + p.Err.Msg
		}
		p.Events = lenientEvents(body)
		return p
	}
	if elems == nil { // "null" unmarshals into a nil slice without complaint
		p.Err = &MalformedError{Offset: -1, Element: -1, Msg: "not an array: the payload is null"}
		return p
	}
	p.Events = make([]Event, 0, len(elems))
	for i, raw := range elems {
		ev, err := strictEvent(i, raw)
		if err != nil && p.Err == nil {
			p.Err = err
		}
		p.Events = append(p.Events, ev)
	}
	if p.Err != nil {
		p.Events = lenientEvents(body)
	}
	return p
}

func jsonError(err error, element int) *MalformedError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &MalformedError{Offset: se.Offset, Element: element, Msg: se.Error()}
	case errors.As(err, &te):
		return &MalformedError{Offset: -1, Element: element, Msg: "the payload is a JSON " + te.Value}
	}
	return &MalformedError{Offset: -1, Element: element, Msg: err.Error()}
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
func (f *eventFields) slot(key []byte) *[]byte {
	switch string(key) {
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
func (f *eventFields) get(name string) (json.RawMessage, bool) {
	p := f.slot([]byte(name))
	if p == nil || *p == nil {
		return nil, false
	}
	return *p, true
}

func strictEvent(i int, raw json.RawMessage) (Event, *MalformedError) {
	ev := Event{Index: i, Raw: raw}
	if k := kindOf(raw); k != kindObject {
		return ev, &MalformedError{Offset: -1, Element: i, Msg: "want an object, got " + k.String()}
	}
	var f eventFields
	scanObject(raw, func(key []byte, val []byte) {
		if p := f.slot(key); p != nil {
			*p = val
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
		*r.dst = unquote(r.raw)
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
func diagnostics(ev *Event, get func(string) (json.RawMessage, bool)) {
	str := func(name string) string {
		v, ok := get(name)
		if !ok {
			return ""
		}
		if kindOf(v) == kindString {
			return unquote(v)
		}
		return string(bytes.TrimSpace(v))
	}
	num := func(name string) *int64 {
		v, ok := get(name)
		if !ok {
			return nil
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			v = json.RawMessage(s)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			return nil
		}
		return &n
	}
	ev.DeadLetterReason = str("deadLetterReason")
	ev.DeliveryAttempts = num("deliveryAttempts")
	ev.LastDeliveryOutcome = str("lastDeliveryOutcome")
	ev.LastHTTPStatusCode = num("lastHttpStatusCode")
	ev.PublishTime = str("publishTime")
	ev.LastDeliveryAttemptTime = str("lastDeliveryAttemptTime")
}

// lenientEvents reads whatever events a malformed payload still holds, so an operator sees its fields: any
// object in a top-level array, names matched case-insensitively (CloudEvents writes them in lowercase) and
// CloudEvents' "type" standing in for eventType.
func lenientEvents(body []byte) []Event {
	var elems []json.RawMessage
	if json.Unmarshal(body, &elems) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal(body, &one) != nil {
			return nil
		}
		elems = []json.RawMessage{body}
	}
	var out []Event
	for i, raw := range elems {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			continue
		}
		get := func(name string) (json.RawMessage, bool) {
			if v, ok := obj[name]; ok {
				return v, true
			}
			for k, v := range obj {
				if strings.EqualFold(k, name) {
					return v, true
				}
			}
			return nil, false
		}
		str := func(names ...string) string {
			for _, n := range names {
				if v, ok := get(n); ok {
					var s string
					if json.Unmarshal(v, &s) == nil {
						return s
					}
					return string(bytes.TrimSpace(v))
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
