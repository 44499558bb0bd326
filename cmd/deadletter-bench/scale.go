package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/tui"
	"golang.org/x/sync/errgroup"
)

var (
	nScaleDir   = flag.Int("scale-dir", 1_000_000, "blobs in the directory of the scale phase")
	nScaleAzure = flag.Int("scale-azure", 50_000, "blobs on Azurite in the scale phase")
	scaleFrom   = flag.String("scale-from", "", "a directory of dead letters to open in the scale phase instead of writing -scale-dir blobs (investigating; -scale-write-only makes one)")
	scaleWrite  = flag.String("scale-write-only", "", "write -scale-dir blobs into this directory and exit")
	scaleChild  = flag.String("scale-child", "", "internal: open the dashboard on the directory and report its scale figures")
	fromChild   = flag.String("twin-from-child", "", "internal: start a twin --from the directory and report its time and peak RSS")
	twinKeep    = flag.String("twin-keep", "", "internal: where -twin-from-child makes its twin and leaves it (its state directory beside it)")
)

// dashboard is the real dashboard driven without a terminal, as tea.Program drives it: every command runs in a
// goroutine of its own and its message goes back into Update on one loop. No polling timer is ever started.
type dashboard struct {
	m    *tui.Model
	msgs chan tea.Msg
	busy int // commands still running
}

func newDashboard(l *replay.Loader, w, h int) *dashboard {
	m := tui.New(tui.Options{Session: session.Over(l, session.Spec{ReadOnly: true}), Interval: time.Hour, Theme: tui.Theme{Profile: colorprofile.TrueColor}, Clipboard: io.Discard,
		After: func(time.Duration, tea.Msg) tea.Cmd { return nil }})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	d := &dashboard{m: m, msgs: make(chan tea.Msg, 64)}
	d.start(m.Init())
	return d
}

func (d *dashboard) start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	d.busy++
	go func() { d.msgs <- cmd() }()
}

// run delivers messages until done says so or no command is left running.
func (d *dashboard) run(done func() bool) {
	for d.busy > 0 && !done() {
		msg := <-d.msgs
		d.busy--
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.start(c)
			}
		default:
			_, next := d.m.Update(msg)
			d.start(next)
		}
	}
}

var anyRows = regexp.MustCompile(`[1-4] (Stranded|Quarantine|Live|Archived) [1-9]`)

// showsRows reports whether a pane holds rows yet (the tab line counts them).
func (d *dashboard) showsRows() bool { return anyRows.MatchString(d.m.Screen()) }

// listed reports whether the listing has ended (the header no longer says "listing…").
func (d *dashboard) listed() bool {
	v := d.m.Screen()
	return !strings.Contains(v, "listing…") && anyRows.MatchString(v)
}

type scaleFigures struct {
	FirstRow, FullList time.Duration
	RSSMB              float64
	MoveMs, ViewMs     float64
}

// phaseScale: a million blobs in a directory (first row, full listing, peak RSS, a cursor move at 1M rows), and
// on Azurite the time to the first row against a full raw listing of the same container.
func phaseScale() []row {
	dir := *scaleFrom
	if dir == "" {
		d, err := os.MkdirTemp("", "deadletter-scale-")
		must(err)
		defer os.RemoveAll(d)
		fmt.Fprintf(os.Stderr, "writing %d blobs into a directory…\n", *nScaleDir)
		writeDir(d, *nScaleDir)
		dir = d
	}
	self, err := os.Executable()
	must(err)
	args := []string{"-scale-child", dir}
	if *memProf != "" {
		args = append(args, "-memprofile", *memProf)
	}
	out, err := exec.Command(self, args...).Output()
	must(err)
	var f scaleFigures
	must(json.Unmarshal(out, &f))
	keep, err := os.MkdirTemp("", "deadletter-bench-twin-")
	must(err)
	defer os.RemoveAll(keep)
	out, err = exec.Command(self, "-twin-from-child", dir, "-twin-keep", keep).Output()
	must(err)
	var tf twinFromFigures
	must(json.Unmarshal(out, &tf))
	n := *nScaleDir
	rows := []row{
		{name: fmt.Sprintf("dir %d blobs: first row on screen", n), ours: secs(f.FirstRow), value: f.FirstRow.Seconds(), limit: 1, unit: "s"},
		{name: fmt.Sprintf("dir %d blobs: full listing in the dashboard", n), ours: secs(f.FullList)},
		{name: fmt.Sprintf("dir %d blobs: peak RSS, all listed", n), ours: fmt.Sprintf("%.0f MB", f.RSSMB), value: f.RSSMB, limit: 512, unit: "MB"},
		{name: fmt.Sprintf("dashboard %d rows: cursor move (Update+View)", n), ours: fmt.Sprintf("%.3f ms", f.MoveMs), value: f.MoveMs, limit: 0.5, unit: "ms"},
		{name: fmt.Sprintf("dashboard %d rows: View", n), ours: fmt.Sprintf("%.3f ms", f.ViewMs), value: f.ViewMs, limit: 0.5, unit: "ms"},
		twinFromRow(n, tf),
		{name: fmt.Sprintf("twin start --from dir %d blobs: peak RSS", n), ours: fmt.Sprintf("%.0f MB", tf.RSSMB), value: tf.RSSMB, limit: 512, unit: "MB"},
	}
	rows = append(rows, scaleCommands(dir, n, keep, tf.Err == "")...)
	return append(rows, scaleAzure())
}

// writeDir fills a directory with n small dead letters, written straight to files (setup, not measured).
// Each is dated as Event Grid wrote it, within the hour its name gives (never after now): a backlog of a week,
// stranded but for the last hour's, as an operator meets it — not a million blobs written a minute ago, all live.
func writeDir(dir string, n int) {
	now := time.Now()
	gen := scenario.NewBulk(5, now, rules.DefaultConfig())
	names := make([]string, n)
	bodies := make([][]byte, n)
	for i := range names {
		names[i], bodies[i] = gen.Next()
		names[i] = strings.Replace(names[i], ".json", fmt.Sprintf("-%d.json", i), 1)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range names {
		g.Go(func() error {
			p := filepath.Join(dir, filepath.FromSlash(names[i]))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, bodies[i], 0o644); err != nil {
				return err
			}
			at := rules.ParseBlobName(names[i]).Hour().Add(time.Duration(i%3600) * time.Second)
			if at.IsZero() || at.After(now) {
				return nil
			}
			return os.Chtimes(p, at, at)
		})
	}
	must(g.Wait())
}

// scaleReport runs in a child process of its own, so its peak RSS is the dashboard's alone.
func scaleReport(dir string) {
	d, err := dirstore.Open(dir)
	must(err)
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	l := replay.NewLoader(d, cfg)
	l.Concurrency = 1 // reading payloads competes with the listing; the figures here are the listing's
	var f scaleFigures
	start := time.Now()
	db := newDashboard(l, 160, 48)
	db.run(db.showsRows)
	f.FirstRow = time.Since(start)
	db.run(db.listed)
	f.FullList = time.Since(start)
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	f.MoveMs = ms(testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			db.m.Update(down)
			db.m.Screen()
		}
	}))
	f.ViewMs = ms(testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			db.m.Screen()
		}
	}))
	f.RSSMB = peakRSSMB()
	if *memProf != "" {
		p, err := os.Create(*memProf)
		must(err)
		runtime.GC()
		must(pprof.WriteHeapProfile(p))
		must(p.Close())
	}
	runtime.KeepAlive(db) // the profile is of the dashboard holding the listing, not of what is left once it is freed
	out, _ := json.Marshal(f)
	fmt.Println(string(out))
}

func ms(r testing.BenchmarkResult) float64 { return float64(r.NsPerOp()) / 1e6 }

// scaleAzure: on Azurite, the dashboard's first row against one full raw listing of the same container.
func scaleAzure() row {
	ctx := context.Background()
	az := startAzurite()
	defer az.stop()
	const name = "scale"
	fmt.Fprintf(os.Stderr, "seeding %d blobs on Azurite…\n", *nScaleAzure)
	seed(ctx, az.raw(name), *nScaleAzure)
	rawList := timeIt(func() { rawListAll(ctx, az.raw(name), *nScaleAzure) })
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	first := timeIt(func() {
		db := newDashboard(replay.NewLoader(az.ours(name), cfg), 160, 48)
		db.run(db.showsRows)
	})
	return row{name: fmt.Sprintf("azurite %d blobs: first row vs full raw listing", *nScaleAzure), ours: secs(first), raw: secs(rawList),
		ratio: first.Seconds() / rawList.Seconds(), target: 0.25}
}

type twinFromFigures struct {
	Took  time.Duration
	RSSMB float64
	Err   string // what stopped it (the row then says so, and misses its target)
}

// twinFromReport runs in a child process of its own, so its peak RSS is the twin's copy alone: twin start --from
// the directory (listed once, its script inferred, every blob copied by the copy engine, the twin's state written)
// into a directory of its own, its records in a state directory of its own.
func twinFromReport(dir string) {
	ctx := context.Background()
	work := *twinKeep
	if work == "" {
		w, err := os.MkdirTemp("", "deadletter-twin-from-")
		must(err)
		defer os.RemoveAll(w)
		work = w
	}
	must(os.Setenv("XDG_STATE_HOME", filepath.Join(work, "state")))
	d, err := dirstore.Open(dir)
	must(err)
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	if *memProf != "" { // (investigating: the heap profile at the largest heap seen, sampled every half second)
		go func() {
			var peak uint64
			for range time.Tick(500 * time.Millisecond) {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak {
					peak = ms.HeapAlloc
					if p, err := os.Create(*memProf); err == nil {
						pprof.WriteHeapProfile(p)
						p.Close()
					}
				}
			}
		}()
	}
	start := time.Now()
	tw, err := twin.StartFrom(ctx, filepath.Join(work, "twin"), twin.From{Source: d, Describe: "directory " + dir, Config: cfg})
	f := twinFromFigures{Took: time.Since(start), RSSMB: peakRSSMB()}
	if err != nil {
		f.Err = err.Error()
	} else {
		tw.Close()
	}
	out, _ := json.Marshal(f)
	fmt.Println(string(out))
}

// twinFromRow is the time twin start --from took, or what stopped it (a missed target, never a crash of the bench).
func twinFromRow(n int, f twinFromFigures) row {
	r := row{name: fmt.Sprintf("twin start --from dir %d blobs: time", n), ours: secs(f.Took)}
	if f.Err != "" {
		r.ours, r.failed = "failed: "+f.Err, true
	}
	return r
}
