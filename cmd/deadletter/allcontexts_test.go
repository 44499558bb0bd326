package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// permutations are every order of xs.
func permutations[T any](xs []T) [][]T {
	if len(xs) <= 1 {
		return [][]T{append([]T(nil), xs...)}
	}
	var out [][]T
	for i := range xs {
		rest := append(append([]T(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]T{xs[i]}, p...))
		}
	}
	return out
}

// worst takes the worst exit code of the runs — could not check over findings over healthy — wherever the worst
// one stands, never the last or the first non-OK one.
func TestWorstIsTheWorstInEveryPosition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		codes []int
		want  int
	}{
		{[]int{exitOK, exitOK, exitOK}, exitOK},
		{[]int{exitOK, exitOK, exitFindings}, exitFindings},
		{[]int{exitOK, exitOK, exitError}, exitError},
		{[]int{exitOK, exitFindings, exitError}, exitError},
		{[]int{exitFindings, exitFindings, exitError}, exitError},
	} {
		for _, order := range permutations(tc.codes) {
			runs := make([]*contextRun, len(order))
			for i, c := range order {
				runs[i] = &contextRun{name: fmt.Sprint(i)}
				if c != exitOK {
					runs[i].err = exitCode{code: c}
				}
			}
			got := (&contextRun{err: worst(runs)}).code()
			if got != tc.want {
				t.Errorf("runs exiting %v: worst %d, want %d", order, got, tc.want)
			}
		}
	}
}

// check --all-contexts on the binary's command line, the failing context in every position: a healthy directory,
// one with findings, one that cannot be checked (its directory is not there). The exit code is the worst, and
// each context is reported under its name, wherever it stands.
func TestCheckAllContextsTakesTheWorstInEveryPosition(t *testing.T) {
	t.Parallel()
	dirs := map[string]string{"healthy": t.TempDir(), "findings": seeded(t), "broken": filepath.Join(t.TempDir(), "not-there")}
	for _, tc := range []struct {
		contexts []string
		want     int
	}{
		{[]string{"healthy", "healthy2", "findings"}, exitFindings},
		{[]string{"healthy", "findings", "broken"}, exitError},
	} {
		for _, order := range permutations(tc.contexts) {
			var cfg strings.Builder
			cfg.WriteString("contexts:\n")
			for _, c := range order {
				dir := dirs[strings.TrimSuffix(c, "2")]
				fmt.Fprintf(&cfg, "  - name: %s\n    dir: %s\n", c, dir)
			}
			out, errs, code := runCmd(t, "check", "--all-contexts", "--config", writeConfig(t, cfg.String()))
			if code != tc.want {
				t.Errorf("contexts %v: exit %d, want %d\n%s%s", order, code, tc.want, out, errs)
				continue
			}
			for _, c := range order {
				if !strings.Contains(out, "── context "+c+" ──") {
					t.Errorf("contexts %v: %s is not reported\n%s", order, c, out)
				}
			}
		}
	}
}
