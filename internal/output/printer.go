package output

import "io"

// Format is one way a command prints its answer: the command declares the formats it has (the first its
// default), and -o picks one.
type Format string

// The formats.
const (
	Words    Format = "text"  // words for a person, fitted to the terminal when the command fits its words
	Wide     Format = "wide"  // the same, every line or column whole
	JSON     Format = "json"  // one JSON document (docs/json.md)
	JSONL    Format = "jsonl" // JSON lines: one document per line, streamed
	Names    Format = "name"  // blob names only, one a line
	Markdown Format = "md"    // Markdown
)

// Help says what each format is, for -o's help.
var Help = map[Format]string{
	Words: "text", Wide: "wide (every line and column whole)", JSON: "json (docs/json.md)",
	JSONL: "jsonl (one JSON document a line)", Names: "name (blob names only)", Markdown: "md (Markdown)",
}

// Print is the one printer: doc, a typed document, as the format asks — one JSON document, or one line of JSON
// lines — or, for the formats of words (text, wide, name, Markdown), the command's words.
func Print(w io.Writer, f Format, doc any, words func()) error {
	switch f {
	case JSON:
		return WriteJSON(w, doc)
	case JSONL:
		return WriteJSONLine(w, doc)
	}
	if words != nil {
		words()
	}
	return nil
}
