package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// forContext is an app for one context of the config file: the defaults, then the context's values, then what
// the command line gave (flags beat a context). Its output goes to out and errs.
func (a *app) forContext(cmd *cobra.Command, c *namedContext, out, errs io.Writer) (*app, error) {
	if c.Err != nil {
		return nil, c.Err
	}
	sub := newApp(stdio{in: a.io.in, out: out, err: errs})
	sub.config, sub.context = a.config, c.Name
	fs := pflag.NewFlagSet(c.Name, pflag.ContinueOnError)
	sub.globalFlags(fs)
	var cmdErr error
	cmd.Flags().Visit(func(f *pflag.Flag) { // the command line first: marked changed, so the context leaves them
		if g := fs.Lookup(f.Name); g != nil && cmdErr == nil && f.Name != "context" {
			cmdErr = fs.Set(f.Name, f.Value.String())
		}
	})
	if cmdErr != nil {
		return nil, cmdErr
	}
	if _, err := applyContext(fs, c); err != nil {
		return nil, err
	}
	if err := sub.g.validate(); err != nil {
		return nil, fmt.Errorf("context %q: %w", c.Name, err)
	}
	return sub, nil
}

// contextRun is what one context's run of a command printed, and how it ended.
type contextRun struct {
	name      string
	out, errs bytes.Buffer
	err       error
}

// code is the run's exit code.
func (r *contextRun) code() int {
	var ec exitCode
	switch {
	case r.err == nil:
		return exitOK
	case errors.As(r.err, &ec):
		return ec.code
	}
	return exitError
}

// eachContext runs f for every context of the config file at once — a slow or unreachable one never holds up
// the others — and returns their runs in the file's order.
func (a *app) eachContext(cmd *cobra.Command, f func(sub *app) error) ([]*contextRun, error) {
	if a.config == nil || len(a.config.Contexts) == 0 {
		return nil, usagef("--all-contexts needs a config file with contexts (deadletter context --help shows its shape)")
	}
	runs := make([]*contextRun, len(a.config.Contexts))
	var wg sync.WaitGroup
	for i := range a.config.Contexts {
		c := &a.config.Contexts[i]
		r := &contextRun{name: c.Name}
		runs[i] = r
		sub, err := a.forContext(cmd, c, &r.out, &r.errs)
		if err != nil {
			r.err = exitCode{code: exitError, err: err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.err = f(sub)
		}()
	}
	wg.Wait()
	return runs, nil
}

// worst is the exit code of several runs: could not check (2) over findings (1) over healthy (0).
func worst(runs []*contextRun) error {
	code := exitOK
	for _, r := range runs {
		switch c := r.code(); {
		case c == exitError || code == exitError:
			code = exitError
		case c != exitOK && code == exitOK:
			code = c
		}
	}
	if code == exitOK {
		return nil
	}
	return exitCode{code: code}
}

// printContexts prints each context's run under its name; as JSON, one document keyed by context (a run that
// printed no JSON of its own — it could not start — is its error).
func (a *app) printContexts(runs []*contextRun, asJSON bool) error {
	if asJSON {
		doc := map[string]json.RawMessage{}
		for _, r := range runs {
			raw := bytes.TrimSpace(r.out.Bytes())
			if len(raw) == 0 {
				msg := "could not run"
				if r.err != nil {
					msg = errorText(r.err)
				}
				raw, _ = json.Marshal(map[string]any{"healthy": false, "error": textfmt.Printable(msg)})
			}
			doc[r.name] = raw
		}
		return writeJSON(a.io.out, map[string]any{"contexts": doc})
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(a.io.out)
		}
		fmt.Fprintf(a.io.out, "── context %s ──\n", textfmt.Printable(r.name))
		a.io.out.Write(r.out.Bytes())
		if r.errs.Len() > 0 {
			a.io.out.Write(r.errs.Bytes())
		}
		if r.err != nil && r.out.Len() == 0 && r.errs.Len() == 0 {
			fmt.Fprintln(a.io.out, "could not check: "+textfmt.Printable(errorText(r.err)))
		}
	}
	return nil
}

// errorText is an error's words (an exitCode's own error, when it carries one).
func errorText(err error) string {
	var ec exitCode
	if errors.As(err, &ec) && ec.err != nil {
		return ec.err.Error()
	}
	return strings.TrimSpace(err.Error())
}

// describe names a container for a person, with its context when the command runs in one, and says when its
// time is a rehearsal twin's clock rather than the service's.
func (a *app) describe(c interface{ Describe() string }) string {
	s := c.Describe()
	if a.context != "" {
		s = a.context + " (" + s + ")"
	}
	if rehearsal(c) {
		s += ", a REHEARSAL on its twin's clock"
	}
	return s
}

// rehearsal reports whether a container's service time is a rehearsal twin's clock (dirstore.Dir.Rehearsal).
func rehearsal(c any) bool {
	r, ok := c.(interface{ Rehearsal() bool })
	return ok && r.Rehearsal()
}

// sayRehearsal notes on stderr, for the words of a command that looks at a twin (ls, show, log), that its times
// are the twin's clock: a rehearsal, not the service.
func (a *app) sayRehearsal() {
	if a.g.opened.rehearsal {
		fmt.Fprintf(a.io.err, "note: %s\n", textfmt.Printable(a.estate()))
	}
}

// estate is the container a command acts on, named for a person ("" before it is opened): every write's
// question and result says it.
func (a *app) estate() string {
	if !a.g.opened.set {
		return ""
	}
	return a.describe(a.g.opened)
}
