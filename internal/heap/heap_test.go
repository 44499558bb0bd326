package heap

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLimitFollowsTheLiveHeap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, Floor},
		{100 << 20, Floor},           // small: the floor, GOGC decides
		{400 << 20, 560 << 20},       // a million blobs' snapshot: the collector's own goal above it
		{2 << 30, 2 << 30 * 14 / 10}, // larger than any fixed limit: still that far above it
	} {
		if got := LimitFor(c.live); got != c.want {
			t.Errorf("LimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestTuneFollowsAndYields runs in a child process (Tune changes the runtime for good): the limit rises with a
// live heap above the floor, and GOGC/GOMEMLIMIT from the environment are left alone.
func TestTuneFollowsAndYields(t *testing.T) {
	if os.Getenv("HEAP_CHILD") != "" {
		Tune()
		if os.Getenv("HEAP_ONESHOT") != "" {
			OneShot()
		}
		hold := make([]byte, 512<<20)
		for i := range hold {
			if i%4096 == 0 {
				hold[i] = 1
			}
		}
		runtime.GC()
		deadline := time.Now().Add(10 * time.Second)
		for debug.SetMemoryLimit(-1) < int64(512<<20) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		os.Stdout.WriteString(strconv.Itoa(debug.SetGCPercent(-1)) + " " + strconv.FormatInt(debug.SetMemoryLimit(-1), 10) + "\n")
		runtime.KeepAlive(hold)
		return
	}
	run := func(env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTuneFollowsAndYields$")
		cmd.Env = append(os.Environ(), append(env, "HEAP_CHILD=1")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return string(out)
	}
	var gc, limit int64
	parse := func(s string) {
		f := strings.Fields(s)
		var err1, err2 error
		if len(f) >= 2 {
			gc, err1 = strconv.ParseInt(f[0], 10, 64)
			limit, err2 = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) < 2 || err1 != nil || err2 != nil {
			t.Fatalf("child said %q", s)
		}
	}
	parse(run())
	if gc != GCPercent || limit < 512<<20*14/10 {
		t.Errorf("tuned: GOGC %d, limit %d; want %d and ≥ 1.4 × 512 MiB", gc, limit, GCPercent)
	}
	// A command that answers once collects tighter: at OneShotGCPercent, its limit a quarter above the live heap.
	parse(run("HEAP_ONESHOT=1"))
	if gc != OneShotGCPercent || limit < 512<<20*125/100 || limit >= 512<<20*14/10 {
		t.Errorf("one shot: GOGC %d, limit %d; want %d and 1.25 × the live heap of 512 MiB and more", gc, limit, OneShotGCPercent)
	}
	parse(run("HEAP_ONESHOT=1", "GOGC=77"))
	if gc != 77 {
		t.Errorf("one shot with GOGC=77 collects at %d", gc)
	}
	parse(run("GOGC=77", "GOMEMLIMIT=3GiB"))
	if gc != 77 || limit != 3<<30 {
		t.Errorf("the environment's GOGC=77 GOMEMLIMIT=3GiB became %d and %d", gc, limit)
	}
}

// A stream collects at StreamGCPercent while it runs and puts the setting back after; GOGC in the environment wins.
func TestStreamingCollectsSoonerAndPutsItBack(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set for this run: Streaming leaves it alone by design")
	}
	was := debug.SetGCPercent(40)
	defer debug.SetGCPercent(was)
	restore := Streaming()
	if got := debug.SetGCPercent(StreamGCPercent); got != StreamGCPercent {
		t.Fatalf("while streaming the collector runs at %d%%, want %d%%", got, StreamGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(40); got != 40 {
		t.Fatalf("after the stream the collector runs at %d%%, want 40%% back", got)
	}
	t.Setenv("GOGC", "77")
	debug.SetGCPercent(77)
	Streaming()()
	if got := debug.SetGCPercent(40); got != 77 {
		t.Fatalf("with GOGC=77 set, Streaming changed the collector to %d%%", got)
	}
}
