package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// forContext is an app for one context of the config file: the defaults, then the context's values, then what
// the command line gave (flags beat a context). Its output goes to out and errs.
func (a *factory) forContext(cmd *cobra.Command, c *session.NamedContext, out, errs io.Writer) (*factory, error) {
	if c.Err != nil {
		return nil, c.Err
	}
	sub := newFactory(stdio{in: a.io.in, out: out, err: errs})
	sub.config, sub.context, sub.timeoutGiven = a.config, c.Name, a.timeoutGiven
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
func (f *factory) eachContext(cmd *cobra.Command, run func(sub *factory) error) ([]*contextRun, error) {
	if f.config == nil || len(f.config.Contexts) == 0 {
		return nil, usagef("--all-contexts needs a config file with contexts (deadletter context --help shows its shape)")
	}
	runs := make([]*contextRun, len(f.config.Contexts))
	var wg sync.WaitGroup
	for i := range f.config.Contexts {
		c := &f.config.Contexts[i]
		r := &contextRun{name: c.Name}
		runs[i] = r
		sub, err := f.forContext(cmd, c, &r.out, &r.errs)
		if err != nil {
			r.err = exitCode{code: exitError, err: err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.err = run(sub)
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
func (f *factory) printContexts(runs []*contextRun, out *printFlags) error {
	if out.json() {
		doc := map[string]json.RawMessage{}
		for _, r := range runs {
			raw := bytes.TrimSpace(r.out.Bytes())
			if len(raw) == 0 {
				msg := "could not run"
				if r.err != nil {
					msg = errorText(r.err)
				}
				raw, _ = output.Marshal(output.CheckErrorJSON{Healthy: false, Error: output.Text(msg)})
			}
			doc[r.name] = raw
		}
		return out.print(f.io.out, output.ContextsJSON{Contexts: doc}, nil)
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(f.io.out)
		}
		fmt.Fprintf(f.io.out, "── context %s ──\n", textfmt.Printable(r.name))
		f.io.out.Write(r.out.Bytes())
		if r.errs.Len() > 0 {
			f.io.out.Write(r.errs.Bytes())
		}
		if r.err != nil && r.out.Len() == 0 && r.errs.Len() == 0 {
			fmt.Fprintln(f.io.out, "could not check: "+textfmt.Printable(errorText(r.err)))
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

// sayRehearsal notes on stderr, for the words of a command that looks at a twin (ls, show, log), that its times
// are the twin's clock: a rehearsal, not the service.
func (f *factory) sayRehearsal(s *session.Session) {
	if s.Rehearsal() {
		fmt.Fprintf(f.io.err, "note: %s\n", textfmt.Printable(s.Estate()))
	}
}
