package main

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
)

// fitWriter fits a command's words to the terminal it prints on: each line longer than the width wraps at a
// space, continued under where its text starts (after a label such as "  stranded      "), and a word longer than
// the room — a blob's name — is cut in the middle, so both its subscription and its GUID's end stay. -o wide (or a
// pipe) prints everything uncut.
type fitWriter struct {
	w       io.Writer
	width   int
	partial []byte
}

func (f *fitWriter) Write(p []byte) (int, error) {
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(f.w, fitLine(string(f.partial[:i]), f.width)+"\n"); err != nil {
			return 0, err
		}
		f.partial = f.partial[i+1:]
	}
}

// flush writes what is left of an unfinished line.
func (f *fitWriter) flush() {
	if len(f.partial) > 0 {
		io.WriteString(f.w, fitLine(string(f.partial), f.width))
		f.partial = nil
	}
}

// fitLine fits one line of a command's words to width (see fitWriter): a name too long for a line is cut in
// the middle.
func fitLine(line string, width int) string { return wrapHanging(line, width, true) }

// wrapHelp wraps help text to the width: paragraphs of the description joined and wrapped, every other line
// wrapped under where its text starts.
func wrapHelp(text string, width int) string {
	head, rest, found := strings.Cut(text, "\nUsage:")
	if !found {
		head, rest = "", text
	} else {
		rest = "Usage:" + rest
		head = reflow(head) + "\n"
	}
	var out []string
	for _, line := range strings.Split(head+rest, "\n") {
		out = append(out, fitHelpLine(line, width))
	}
	return strings.Join(out, "\n")
}

// fitHelpLine is fitLine for help: a long word (a URL in a flag's description) is broken, not cut — help must
// lose nothing.
func fitHelpLine(line string, width int) string { return wrapHanging(line, width, false) }

// wrapHanging wraps a line to width at spaces, each continuation under where the line's text starts (its hanging
// indent). A word longer than a continuation line is cut in the middle when cutLong, else broken where the line
// ends.
func wrapHanging(line string, width int, cutLong bool) string {
	if width < 20 || textfmt.Width(line) <= width {
		return line
	}
	indent := hangingIndent(line)
	if indent > width/2 {
		indent = min(4, width/4)
	}
	line, whole := keepPhrases(line)
	if cutLong {
		words := strings.Split(line, " ")
		for i, w := range words {
			if textfmt.Width(w) > width-indent {
				words[i] = textfmt.ShortenMiddle(w, width-indent)
			}
		}
		line = strings.Join(words, " ")
	}
	var out []string
	for first := true; line != ""; first = false {
		w, prefix := width, ""
		if !first {
			w, prefix = width-indent, strings.Repeat(" ", indent)
		}
		parts := strings.SplitN(ansi.Wrap(line, w, ""), "\n", 2)
		out = append(out, prefix+strings.TrimRight(parts[0], " "))
		if len(parts) < 2 {
			break
		}
		line = strings.TrimLeft(parts[1], " ")
	}
	return whole(strings.Join(out, "\n"))
}

// phraseSpace stands for a space inside a `quoted command` while a line is wrapped, so the command stays on one
// line ("run `deadletter drain`", never "run `deadletter" and "drain`").
const phraseSpace, phraseHyphen = '\ue000', '\ue001' // (a hyphen too: the wrapper breaks after one)

// keepPhrases joins the words of each backquoted phrase of line, and returns what gives them their spaces back (a
// line that already holds phraseSpace is left as it is).
func keepPhrases(line string) (string, func(string) string) {
	if strings.ContainsAny(line, string([]rune{phraseSpace, phraseHyphen})) || strings.Count(line, "`") < 2 {
		return line, func(s string) string { return s }
	}
	var b strings.Builder
	in := false
	for _, r := range line {
		switch {
		case r == '`':
			in = !in
		case r == ' ' && in:
			r = phraseSpace
		case r == '-' && in:
			r = phraseHyphen
		}
		b.WriteRune(r)
	}
	return b.String(), func(s string) string {
		return strings.NewReplacer(string(phraseSpace), " ", string(phraseHyphen), "-").Replace(s)
	}
}

// reflow joins the lines of each paragraph (lines not indented, up to a blank line) into one, so the terminal's
// width — not the source's — decides where they break.
func reflow(text string) string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		lines := strings.Split(para, "\n")
		var joined []string
		for _, l := range lines {
			if n := len(joined); n > 0 && !strings.HasPrefix(l, " ") && !strings.HasPrefix(joined[n-1], " ") {
				joined[n-1] += " " + l
				continue
			}
			joined = append(joined, l)
		}
		out = append(out, strings.Join(joined, "\n"))
	}
	return strings.Join(out, "\n\n")
}

// hangingIndent is the column a line's text continues at: after the first gap of two or more spaces that follows
// text (a flag's or a finding's description), else the line's own indentation.
func hangingIndent(line string) int {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if i := strings.Index(line[lead:], "  "); i >= 0 {
		j := lead + i
		for j < len(line) && line[j] == ' ' {
			j++
		}
		if j < len(line) {
			return textfmt.Width(line[:j])
		}
	}
	return lead
}

// fitOutput wraps the command's output in a fitWriter when its output is fitted (output.fitted), it prints
// words (not JSON) on a terminal and -o wide was not asked for.
func (f *factory) fitOutput(cmd *cobra.Command) {
	o := outputOf(cmd)
	if o == nil || !o.fits || o.is(outWide) {
		return
	}
	if width, ok := terminalWidth(f.io.err); ok { // what a command says before it acts, and its question
		f.io.err = &fitWriter{w: f.io.err, width: width}
	}
	if o.anyJSON() {
		return
	}
	if width, ok := terminalWidth(f.io.out); ok {
		f.io.out = &fitWriter{w: f.io.out, width: width}
	}
}

// fileOf is the file a writer writes to, through a fitWriter: for terminal checks and for what must not wait for
// a line's end (the progress line, a question).
func fileOf(w io.Writer) (*os.File, bool) {
	if f, ok := w.(*fitWriter); ok {
		w = f.w
	}
	f, ok := w.(*os.File)
	return f, ok
}
