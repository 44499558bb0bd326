package main

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/pflag"
)

// loadConfig finds and reads the config file: --config, else DEADLETTER_CONFIG, else the user's config
// directory. A missing file at the default place is no contexts (everything works as without one); one named by
// --config or the environment must exist.
func (a *factory) loadConfig(flags *pflag.FlagSet) (*session.ConfigFile, error) {
	path, named := a.configPath, true
	if f := flags.Lookup("config"); f == nil || !f.Changed {
		if env := os.Getenv("DEADLETTER_CONFIG"); env != "" {
			path = env
		} else {
			path, named = session.DefaultConfigPath(), false
		}
	}
	if path == "" {
		return nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !named {
		return nil, nil
	}
	return readConfig(path)
}

// readConfig reads a config file, each context's value checked the way its global flag takes it.
func readConfig(path string) (*session.ConfigFile, error) {
	return session.ReadConfig(path, checkContextValue)
}

// checkContextValue checks a context's value as the global flag of its key would take it (a key that sets no
// flag: connection-string-env, name — is taken as it is).
func checkContextValue(key, value string) error {
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	newFactory(stdio{}).globalFlags(fs)
	if f := fs.Lookup(key); f != nil {
		return f.Value.Set(value)
	}
	return nil
}

// contextSource is where the context a command runs in was named: SPEC §5's precedence depends on it.
type contextSource int

const (
	noContext   contextSource = iota
	fromFlag                  // --context
	fromEnv                   // DEADLETTER_CONTEXT
	fromCurrent               // the config file's current-context
)

// contextName is the context a command runs in, and where it was named: --context, else DEADLETTER_CONTEXT, else
// the file's current one.
func (a *factory) contextName(flags *pflag.FlagSet, cf *session.ConfigFile) (string, contextSource, error) {
	name, src := a.contextFlag, fromFlag
	if f := flags.Lookup("context"); f == nil || !f.Changed {
		name, src = os.Getenv("DEADLETTER_CONTEXT"), fromEnv
	}
	if name == "" && cf != nil {
		name, src = cf.Current, fromCurrent
	}
	if name == "" {
		return "", noContext, nil
	}
	if cf == nil {
		return "", noContext, usagef("context %q: there is no config file (%s); deadletter context --help says how to write one", name, textfmt.Printable(session.DefaultConfigPath()))
	}
	if src == fromCurrent && cf.CurrentErr() != nil {
		return "", noContext, cf.CurrentErr()
	}
	c := cf.Find(name)
	if c == nil {
		return "", noContext, usagef("no context %q in %s (have: %s)", textfmt.Printable(name), textfmt.Printable(cf.Path), strings.Join(cf.PrintableNames(), ", "))
	}
	if c.Err != nil {
		return "", noContext, c.Err
	}
	return name, src, nil
}

// containerNamedOver is what names a container above a context named by src (SPEC §5: the command line's
// container flag over DEADLETTER_CONTEXT and the current context; a container variable of the environment over
// the current context) — "--dir", "$AZURE_STORAGE_ACCOUNT_CONNECTION_STRING" — or "" when the context stands.
func containerNamedOver(flags *pflag.FlagSet, src contextSource) string {
	if src == fromFlag || src == noContext {
		return ""
	}
	for _, b := range backendFlags {
		if f := flags.Lookup(b); f != nil && f.Changed {
			return "--" + b
		}
	}
	if src == fromCurrent {
		for _, e := range envVars {
			if slices.Contains(backendFlags, e.flag) && os.Getenv(e.name) != "" {
				return "$" + e.name
			}
		}
	}
	return ""
}

// applyContext sets the global flags a context gives and the command line did not: it returns the flags it set,
// so the environment does not override them (the command line beats the context, the context beats the
// environment). A container named on the command line beats the context's container whatever backend each
// names: --context prod --dir ./snap opens the directory, with prod's other settings.
func applyContext(flags *pflag.FlagSet, c *session.NamedContext) ([]string, error) {
	var set []string
	named := false
	for _, b := range backendFlags {
		if f := flags.Lookup(b); f != nil && f.Changed {
			named = true
		}
	}
	for _, key := range session.ContextKeys {
		v, ok := c.Values[key]
		if !ok || key == "name" || named && (key == "connection-string-env" || slices.Contains(backendFlags, key)) {
			continue
		}
		flag := key
		if key == "connection-string-env" {
			flag = "connection-string"
			cs, ok := os.LookupEnv(v)
			if !ok || cs == "" {
				return nil, usagef("context %q takes its connection string from $%s, which is not set", c.Name, v)
			}
			v = cs
		}
		f := flags.Lookup(flag)
		if f == nil || f.Changed {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return nil, usagef("context %q: %s: %v", c.Name, key, err)
		}
		set = append(set, flag)
	}
	return set, nil
}
