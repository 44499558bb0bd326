package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/spf13/cobra"
)

// A release build sets these: go build -ldflags "-X main.buildVersion=v1.4.0 -X main.buildCommit=$(git rev-parse
// HEAD)". Otherwise the module's build information says it: the module version `go install …@v1.4.0` records, or
// the VCS revision `go build` stamps in a checkout.
var buildVersion, buildCommit string

// versionInfo is what a binary knows of where it came from.
type versionInfo struct {
	Version, Commit, Go string
	Modified            bool // built from a checkout with uncommitted changes
}

// currentVersion is this binary's version: -ldflags first, then the build information.
func currentVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionFrom(bi, buildVersion, buildCommit)
}

// versionFrom reads a build's information, with what -ldflags set winning over it.
func versionFrom(bi *debug.BuildInfo, ldVersion, ldCommit string) versionInfo {
	var v versionInfo
	if bi != nil {
		v.Version, v.Go = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
		// `go install …@v1.4.0` records no VCS settings; a pseudo-version (v0.0.0-20261201…-0123456789ab, what
		// `go install …@<commit>` records) ends with the commit.
		if i := strings.LastIndexByte(v.Version, '-'); v.Commit == "" && i > 0 && len(v.Version)-i-1 == 12 {
			v.Commit = strings.TrimSuffix(v.Version[i+1:], "+dirty")
		}
	}
	if ldVersion != "" {
		v.Version = ldVersion
	}
	if ldCommit != "" {
		v.Commit, v.Modified = ldCommit, false
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

// String is the one line `deadletter version` and `--version` print after "deadletter version ".
func (v versionInfo) String() string {
	commit := "unknown commit"
	if v.Commit != "" {
		commit = "commit " + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			commit += " with uncommitted changes"
		}
	}
	s := v.Version + " (" + commit
	if v.Go != "" {
		s += ", " + v.Go
	}
	return s + ")"
}

func newCmdVersion(a *factory) *cobra.Command {
	var pr *printFlags
	cmd := &cobra.Command{
		Use:   "version",
		Short: "say the version and commit this binary was built from (the same as --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := currentVersion()
			if pr.json() {
				return pr.print(a.io.out, output.VersionJSON{Version: v.Version, Commit: v.Commit, Modified: v.Modified, Go: v.Go}, nil)
			}
			_, err := fmt.Fprintf(a.io.out, "deadletter version %s\n", v)
			return err
		},
	}
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}
