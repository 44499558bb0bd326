//go:build linux

package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
)

// running reports whether a process whose command line holds s is left.
func running(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// A child that leaves the hook's process group (setsid) is stopped with it all the same: nothing a hook starts
// outlives it.
func TestASetsidChildDiesWithTheHook(t *testing.T) {
	done, err := Run(context.Background(), "setsid sleep 31.4159 & setsid sh -c 'sleep 27.1828' & sleep 30",
		Options{Timeout: 500 * time.Millisecond, Grace: 100 * time.Millisecond})
	<-done
	if err != ErrTimeout {
		t.Fatalf("err %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); running("31.4159") || running("27.1828"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a setsid child outlived the hook")
		}
	}
}

// A grandchild that escapes every way a process can — a double fork, a new session, an empty environment (no mark
// to find it by) — is found in the process tree under deadletter, its subreaper, and stopped once the hook's grace
// is over: it never outlives the hook, nor watch.
func TestADoubleForkedSetsidChildWithNoEnvironmentDiesToo(t *testing.T) {
	done, err := Run(context.Background(), "(setsid env -i sh -c 'sleep 16.1803 & sleep 14.1421' &) ; exit 0",
		Options{Timeout: 5 * time.Second, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("err %v", err)
	}
	<-done
	for deadline := time.Now().Add(5 * time.Second); running("16.1803") || running("14.1421"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a double-forked child with no environment outlived the hook")
		}
	}
}

// A hook cannot read deadletter's environment (the connection string) through /proc.
func TestAHookCannotReadDeadlettersEnvironment(t *testing.T) {
	t.Setenv("DEADLETTER_TEST_SECRET_IN_ENV", "the-parents-secret")
	var out testkit.LockedBuffer
	done, _ := Run(context.Background(), "cat /proc/$TARGET/environ 2>&1; echo", Options{Output: &out, Env: []string{"TARGET=" + strconv.Itoa(os.Getpid())}, Timeout: 5 * time.Second})
	<-done
	if strings.Contains(out.String(), "the-parents-secret") {
		t.Fatalf("the hook read deadletter's environment: %q", out.String())
	}
}

// What deadletter itself started in its own process group (the Azure CLI a credential runs; in a test, its build)
// is not a hook's orphan: a hook reaped beside it leaves it running. CI saw a test's `go build` killed so.
func TestAHooksReapSparesDeadlettersOwnChildren(t *testing.T) {
	own := exec.Command("sleep", "23.1406")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	done, err := Run(context.Background(), "(setsid sleep 19.2837 &) ; exit 0", Options{Timeout: 5 * time.Second, Grace: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("err %v", err)
	}
	<-done
	if running("19.2837") {
		t.Fatal("the hook's orphan outlived it")
	}
	if !running("23.1406") {
		t.Fatal("a hook's reap killed a child deadletter started itself")
	}
}

// Two hooks at once (watch reaps one in the background while the next line's runs; --all-contexts runs a watch per
// context): the first's reap leaves the second running.
func TestAHooksReapSparesAnotherHookRunning(t *testing.T) {
	second, secondErr := make(chan (<-chan struct{}), 1), make(chan error, 1)
	go func() {
		d, err := Run(context.Background(), "sleep 1.7321; exit 0", Options{Timeout: 10 * time.Second, Grace: 50 * time.Millisecond})
		second <- d
		secondErr <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); !running("1.7321"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second hook did not start")
		}
	}
	done, err := Run(context.Background(), "(setsid sleep 17.3205 &) ; exit 0", Options{Timeout: 5 * time.Second, Grace: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("err %v", err)
	}
	<-done
	if err := <-secondErr; err != nil {
		t.Fatalf("the second hook, run while the first was reaped: %v", err)
	}
	<-<-second
	if running("17.3205") {
		t.Fatal("the first hook's orphan outlived it")
	}
}

// A worker the next hook detached (setsid -f) while the last hook's reap still runs its grace carries the next
// hook's mark: the last reap leaves it to finish within its own hook's grace. (Found by a hostile review: the last
// reap killed it.)
func TestAHooksReapSparesTheNextHooksDetachedWorker(t *testing.T) {
	done := filepath.Join(t.TempDir(), "worker-done")
	doneA, err := Run(context.Background(), "sleep 7.3141 & exit 0", Options{Timeout: 10 * time.Second, Grace: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	doneB, err := Run(context.Background(), "setsid -f sh -c 'sleep 1.5; echo ok > "+done+"'; exit 0", Options{Timeout: 10 * time.Second, Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	<-doneA
	<-doneB
	if _, err := os.Stat(done); err != nil {
		t.Fatal("the next hook's detached worker was killed by the last hook's reap")
	}
}
