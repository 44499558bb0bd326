package replay

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

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
