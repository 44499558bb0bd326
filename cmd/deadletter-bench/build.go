package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The first start a newcomer waits through: `go run ./cmd/deadletter demo` on a machine that has never built the
// module downloads its modules (that measures the proxy, so it is timed apart and has no target) and then compiles
// every package the binary links with nothing on the screen. Both are measured here as a fresh machine does them:
// an empty module cache and an empty build cache of their own, the user's caches untouched.

var (
	buildLimit = flag.Float64("build-limit", 90, "target for the cold build of cmd/deadletter, seconds (this repository's 2-core reference machine)")
	sizeLimit  = flag.Float64("size-limit", 24, "target for the size of the deadletter binary, MB (10^6 bytes)")
)

// phaseBuild: module download (apart), cold build of cmd/deadletter, the packages it compiles and the binary's size.
func phaseBuild() []row {
	root := moduleRoot()
	tmp, err := os.MkdirTemp("", "deadletter-bench-build-")
	must(err)
	defer func() {
		// the module cache is read-only unless told otherwise; make it removable first
		_ = exec.Command("chmod", "-R", "u+w", tmp).Run()
		_ = os.RemoveAll(tmp)
	}()
	env := append(os.Environ(),
		"GOMODCACHE="+filepath.Join(tmp, "mod"),
		"GOCACHE="+filepath.Join(tmp, "cache"),
		"GOFLAGS=-modcacherw",
	)
	run := func(args ...string) time.Duration {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = root, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fail("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return time.Since(start)
	}
	download := run("mod", "download")
	bin := filepath.Join(tmp, "deadletter")
	build := run("build", "-o", bin, "./cmd/deadletter")

	list := exec.Command("go", "list", "-deps", "./cmd/deadletter")
	list.Dir, list.Env = root, env
	out, err := list.Output()
	must(err)
	packages := strings.Count(string(out), "\n")
	info, err := os.Stat(bin)
	must(err)
	mb := float64(info.Size()) / 1e6

	return []row{
		{name: "module download (the proxy; no target)", ours: fmt.Sprintf("%.1f s", download.Seconds())},
		{name: fmt.Sprintf("cold build of cmd/deadletter (%d packages)", packages), ours: fmt.Sprintf("%.1f s", build.Seconds()),
			value: build.Seconds(), limit: *buildLimit, unit: "s"},
		{name: "deadletter binary size", ours: fmt.Sprintf("%.1f MB", mb), value: mb, limit: *sizeLimit, unit: "MB"},
	}
}

// moduleRoot is the directory of this module's go.mod (bench.sh runs the tool from the repository's root, but a
// `go run` from elsewhere in the module works too).
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	must(err)
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		fail("the build phase runs inside the deadletter module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod)
}
