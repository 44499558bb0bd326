package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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

var requiredFields = [...]string{"id", "subject", "eventType", "dataVersion"}

// ParsePayload validates body against the estate's schema: a JSON array of objects, each with string id,
// subject, eventType and dataVersion (data optional and free, any other field kept). One bad element makes the
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

func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func strictEvent(i int, raw json.RawMessage) (Event, *MalformedError) {
	ev := Event{Index: i, Raw: raw}
	if k := kindOf(raw); k != "an object" {
		return ev, &MalformedError{Offset: -1, Element: i, Msg: "want an object, got " + k}
	}
	var fields [len(wanted)][]byte
	scanObject(raw, func(key []byte, val []byte) {
		for j, w := range wanted {
			if string(key) == w {
				fields[j] = val
			}
		}
	})
	dst := [...]*string{&ev.ID, &ev.Subject, &ev.EventType, &ev.DataVersion}
	for j, f := range requiredFields {
		v := fields[j]
		if v == nil {
			return ev, &MalformedError{Offset: -1, Element: i, Field: f, Msg: "missing (required string)"}
		}
		if k := kindOf(v); k != "a string" {
			return ev, &MalformedError{Offset: -1, Element: i, Field: f, Msg: "want a string, got " + k}
		}
		*dst[j] = unquote(v)
	}
	if d := fields[4]; d != nil {
		ev.Data, ev.HasData = d, true
	}
	diagnostics(&ev, func(name string) (json.RawMessage, bool) {
		for j, w := range wanted {
			if w == name && fields[j] != nil {
				return fields[j], true
			}
		}
		return nil, false
	})
	return ev, nil
}

// wanted are the fields read out of each event: the four required, data, and the diagnostics.
var wanted = [...]string{"id", "subject", "eventType", "dataVersion", "data", "deadLetterReason", "deliveryAttempts",
	"lastDeliveryOutcome", "lastHttpStatusCode", "publishTime", "lastDeliveryAttemptTime"}

// scanObject calls visit for each top-level key of obj with the raw value. obj must be one valid JSON object
// (an element of an array json.Unmarshal already validated), so nothing is validated again; keys are compared
// as written, case-sensitively, and a repeated key's last value wins — as JSON.parse does.
func scanObject(obj []byte, visit func(key, val []byte)) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		kEnd := skipValue(obj, i)
		key := obj[i+1 : max(i+1, kEnd-1)]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unquote(obj[i:kEnd]))
		}
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		visit(key, obj[i:vEnd])
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i] (valid JSON; never past len(b)).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// unquote decodes a JSON string value: directly when it has no escapes and is valid UTF-8, else through
// encoding/json (which, like the estate's decoding, turns invalid UTF-8 into U+FFFD).
func unquote(v []byte) string {
	if len(v) >= 2 && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return string(v[1 : len(v)-1])
	}
	var s string
	json.Unmarshal(v, &s)
	return s
}

// diagnostics fills Event Grid's optional fields. Their types are not part of the estate's schema, so a field of
// an unexpected type is shown as its raw text rather than refused.
func diagnostics(ev *Event, get func(string) (json.RawMessage, bool)) {
	str := func(name string) string {
		v, ok := get(name)
		if !ok {
			return ""
		}
		if kindOf(v) == "a string" {
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
