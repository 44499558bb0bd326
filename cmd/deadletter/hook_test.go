package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watch --exec runs the notifier in a group of its own: what it starts in the background is gone a short grace
// after it exits, and when watch stops; it never sees the account key, and it is told the change in DEADLETTER_*
// variables as well as on stdin.
func TestExecHooksLeaveNothingAndLeakNothing(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	work := t.TempDir()
	// Each hook leaves two background sleeps: its own child, and a grandchild from a shell of its own.
	hook := `sleep 300 & echo $! >> ` + work + `/children; sh -c 'sleep 300 & echo $! >> ` + work + `/children'; ` +
		`env > ` + work + `/env.$$; cat > ` + work + `/stdin.$$`
	secret := "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=" + strings.Repeat("S3CRET", 10) + ";EndpointSuffix=core.windows.net"
	sas := "https://prod.blob.core.windows.net/?sv=2024-01-01&sig=" + strings.Repeat("SIG", 10)
	cmd, _, errs := startWith(t, []string{"AZURE_STORAGE_ACCOUNT_CONNECTION_STRING=" + secret, "MY_BACKUP_URL=" + sas, "AZURE_CLIENT_SECRET=x"},
		"watch", "--dir", dir, "--interval", "1h", "--exec", hook)
	eventually(t, "the hooks of the first pass", func() bool { return countLines(filepath.Join(work, "children")) >= 4 })
	// The hooks exited at once; their background children get the grace (2s), then are killed.
	eventually(t, "the children to be gone", func() bool { return alive(t, filepath.Join(work, "children")) == 0 })
	envs, _ := filepath.Glob(filepath.Join(work, "env.*"))
	if len(envs) == 0 {
		t.Fatal("no hook ran")
	}
	env, _ := os.ReadFile(envs[0])
	for _, want := range []string{"DEADLETTER_EVENT=state", "DEADLETTER_KIND=", "DEADLETTER_COUNT="} {
		if !strings.Contains(string(env), want) {
			t.Errorf("the hook's environment lacks %s:\n%s", want, env)
		}
	}
	for _, leak := range []string{"S3CRET", "SIGSIGSIG", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_ACCOUNT_CONNECTION_STRING"} {
		if strings.Contains(string(env), leak) {
			t.Errorf("the hook's environment holds %s:\n%s", leak, env)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exitOf(t, cmd, 10*time.Second)
	if strings.Contains(errs.String(), "WaitDelay") {
		t.Fatalf("a hook's background child held its output: %s", errs)
	}
}

// A hook that is still running when watch stops is killed with everything it started.
func TestExecHookStoppedWithWatch(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	work := t.TempDir()
	hook := `sleep 300 & echo $! >> ` + work + `/children; echo $$ >> ` + work + `/children; sleep 300`
	cmd, _, _ := start(t, "watch", "--dir", dir, "--interval", "1h", "--exec", hook)
	eventually(t, "a hook running", func() bool { return countLines(filepath.Join(work, "children")) >= 2 })
	cmd.Process.Signal(syscall.SIGINT)
	exitOf(t, cmd, 10*time.Second)
	eventually(t, "the hook and its child to be gone", func() bool { return alive(t, filepath.Join(work, "children")) == 0 })
}

func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return len(strings.Fields(string(b)))
}

// alive counts the processes of a pid file still running (a zombie is not running).
func alive(t *testing.T, path string) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil && !strings.Contains(string(st), ") Z ") {
			n++
		}
	}
	return n
}
