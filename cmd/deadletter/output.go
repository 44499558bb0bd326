package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The output model, kubectl's print flags placed as gh places them: each command declares in its constructor the
// formats it prints (one line: declareOutput(cmd, "text", "wide", "json")), and -o picks one. The first format
// is the default. --json, --jsonl and report's --format stay as aliases of -o json, -o jsonl and -o FORMAT, so
// scripts written before -o keep working; a format the command does not print is a usage error naming the ones
// it does.
const (
	outText  = string(output.Words) // words for a person, fitted to the terminal when the command fits (fits)
	outWide  = string(output.Wide)
	outJSON  = string(output.JSON)
	outJSONL = string(output.JSONL)
	outName  = string(output.Names)
	outMD    = string(output.Markdown)
)

// formatHelp is what each format means in -o's help.
func formatHelp(f string) string { return output.Help[output.Format(f)] }

// printFlags is a command's -o: the formats it prints and the one asked for. It is the -o flag's value, so
// prepare finds it from the flag alone; its print is the one printer (output.Print).
type printFlags struct {
	formats []string
	format  string
	// by is the flag that set format ("-o", "--json", …), so two that disagree are refused, not one silently won.
	by string
	// fits says the command's words are fitted to the terminal (fitWriter) unless -o wide or a JSON format.
	fits bool
}

// declareOutput gives cmd -o with formats (the first the default) and the aliases of those it has: --json,
// --jsonl. A command that printed --format keeps it with aliasFormat.
func declareOutput(cmd *cobra.Command, formats ...string) *printFlags {
	o := &printFlags{formats: formats, format: formats[0]}
	var helps []string
	for _, f := range formats {
		helps = append(helps, formatHelp(f))
	}
	fs := cmd.Flags()
	fs.VarP(o, "output", "o", "how to print: "+strings.Join(helps, ", "))
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	if slices.Contains(formats, outJSON) {
		aliasBool(fs, o, "json", outJSON, "JSON output: -o json")
	}
	if slices.Contains(formats, outJSONL) {
		aliasBool(fs, o, "jsonl", outJSONL, "JSON lines, one document a line: -o jsonl")
	}
	return o
}

// fitted marks the command as one whose words are fitted to the terminal (see fitWriter).
func (o *printFlags) fitted() *printFlags { o.fits = true; return o }

// aliasFormat adds --NAME FORMAT as another spelling of -o FORMAT (report's --format md|json).
func (o *printFlags) aliasFormat(cmd *cobra.Command, name string) {
	cmd.Flags().Var(formatAlias{o, "--" + name}, name, orList(o.formats)+": -o")
	cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(o.formats, cobra.ShellCompDirectiveNoFileComp))
}

func (o *printFlags) json() bool       { return o.format == outJSON }
func (o *printFlags) jsonl() bool      { return o.format == outJSONL }
func (o *printFlags) is(f string) bool { return o.format == f }

// anyJSON says the command prints JSON of either kind (its words are never fitted to a terminal).
func (o *printFlags) anyJSON() bool { return o.json() || o.jsonl() }

func (o *printFlags) String() string     { return o.format }
func (o *printFlags) Type() string       { return "format" }
func (o *printFlags) Set(s string) error { return o.set(s, "-o") }

func (o *printFlags) set(s, by string) error {
	if !slices.Contains(o.formats, s) {
		return fmt.Errorf("this command prints %s", orList(o.formats))
	}
	if o.by != "" && o.by != by && o.format != s {
		return fmt.Errorf("%s asks for %s where %s asked for %s: give one", by, s, o.by, o.format)
	}
	o.format, o.by = s, by
	return nil
}

// print writes v as the command's format asks (output.Print: one JSON document, one JSON line, or the command's
// words, text).
func (o *printFlags) print(w io.Writer, v any, text func()) error {
	return output.Print(w, output.Format(o.format), v, text)
}

// boolAlias is --json or --jsonl: a switch that sets -o.
type boolAlias struct {
	o           *printFlags
	flag, value string
}

func aliasBool(fs *pflag.FlagSet, o *printFlags, name, value, usage string) {
	f := fs.VarPF(boolAlias{o, "--" + name, value}, name, "", usage)
	f.NoOptDefVal = "true"
}

func (b boolAlias) String() string { return fmt.Sprint(b.o.format == b.value && b.o.by == b.flag) }
func (b boolAlias) Type() string   { return "bool" }
func (b boolAlias) Set(s string) error {
	switch s {
	case "true":
		return b.o.set(b.value, b.flag)
	case "false":
		return nil
	}
	return fmt.Errorf("%s=%s: want true or false", b.flag, s)
}

// formatAlias is a string flag that sets -o (report's --format).
type formatAlias struct {
	o    *printFlags
	flag string
}

func (f formatAlias) String() string     { return f.o.format }
func (f formatAlias) Type() string       { return "format" }
func (f formatAlias) Set(s string) error { return f.o.set(s, f.flag) }

// outputOf is the command's declared output, if it has one.
func outputOf(cmd *cobra.Command) *printFlags {
	if f := cmd.Flags().Lookup("output"); f != nil {
		if o, ok := f.Value.(*printFlags); ok {
			return o
		}
	}
	return nil
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
