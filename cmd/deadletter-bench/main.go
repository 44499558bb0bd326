// Command deadletter-bench measures deadletter against the limit: the raw azblob SDK on the same Azurite in the
// same run. It prints, per measurement, ours, the raw figure and the ratio, with the target, and exits 1 when a
// target is missed (unless -smoke, which runs tiny sizes only to prove the tool works).
//
// Run it through ./bench.sh, which installs Azurite when missing. Each phase gets a fresh Azurite (its list
// time grows faster than linearly and its garbage collection stalls an instance that lives past ten minutes).
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	tea "charm.land/bubbletea/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/deadletter/deadletter/internal/heap"
	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

const accountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

var (
	nList    = flag.Int("list", 50000, "blobs for the refresh measurement")
	nHydrate = flag.Int("hydrate", 10000, "blobs for the hydrate measurement")
	nDrain   = flag.Int("drain", 10000, "blobs for the drain measurement")
	nRSS     = flag.Int("rss", 100000, "hydrated blobs held for the peak RSS measurement")
	nRows    = flag.Int("rows", 100000, "dashboard rows")
	rounds   = flag.Int("rounds", 3, "rounds per measurement (the median is reported)")
	conc     = flag.Int("c", 16, "concurrency of ours (and of the raw drain loop)")
	smoke    = flag.Bool("smoke", false, "tiny sizes, one round, no targets: proves the tool runs (CI)")
	rssChild = flag.String("rss-child", "", "internal: hold the directory's blobs hydrated and print peak RSS")
	phases   = flag.String("phases", "read,drain,rss,ui,scale,twin,build", "which measurements to run (build is skipped by -smoke: it downloads every module afresh)")
	cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the whole run (investigating a missed target)")
	memProf  = flag.String("memprofile", "", "write a heap profile of the scale phase's dashboard once it has listed, and of its twin start --from at its largest heap (investigating their RSS)")
	azBin    = flag.String("azurite", os.Getenv("DEADLETTER_AZURITE_BIN"), "azurite-blob executable (bench.sh sets DEADLETTER_AZURITE_BIN)")
)

func main() {
	flag.Parse()
	heap.Tune() // the children measure memory as the deadletter binary runs
	if *rssChild != "" {
		holdAndReport(*rssChild)
		return
	}
	if *scaleChild != "" {
		scaleReport(*scaleChild)
		return
	}
	if *scaleWrite != "" {
		writeDir(*scaleWrite, *nScaleDir)
		return
	}
	if *fromChild != "" {
		twinFromReport(*fromChild)
		return
	}
	if *smoke {
		*nList, *nHydrate, *nDrain, *nRSS, *nRows, *rounds, *nScaleDir, *nScaleAzure = 300, 200, 200, 2000, 2000, 1, 3000, 300
	}
	if *azBin == "" {
		fail("no Azurite: run ./bench.sh, or set DEADLETTER_AZURITE_BIN to an azurite-blob executable")
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		must(err)
		must(pprof.StartCPUProfile(f))
	}
	start := time.Now()
	var rows []row
	want := func(p string) bool { return strings.Contains(","+*phases+",", ","+p+",") }
	// The cold build runs first, on the machine as a newcomer finds it: run after the million-blob phases it
	// competed with their gigabytes still being written back and removed (101.6 s in one full run, 78.5 s alone
	// minutes later). Its rows still print last.
	var build []row
	if want("build") && !*smoke {
		build = phaseBuild()
	}
	if want("read") {
		rows = append(rows, phaseRead()...)
	}
	if want("drain") {
		rows = append(rows, phaseDrain())
	}
	if want("rss") {
		rows = append(rows, phaseRSS())
	}
	if want("ui") {
		rows = append(rows, phaseDashboard()...)
	}
	if want("scale") {
		rows = append(rows, phaseScale()...)
	}
	if want("twin") {
		rows = append(rows, phaseTwin())
	}
	rows = append(rows, build...)
	pprof.StopCPUProfile() // before any os.Exit, which would skip a deferred stop
	missed := printTable(rows)
	fmt.Printf("\nmedians of %d alternating rounds (refresh, hydrate) and %d (drain); total %s\n", noisyRounds(), *rounds, time.Since(start).Round(time.Second))
	if missed > 0 && !*smoke {
		fmt.Printf("%d target(s) missed\n", missed)
		os.Exit(1)
	}
}

// phaseTwin is the rehearsal twin's day: twin advance --by 24h of the incident (the budget: 10 s).
func phaseTwin() row {
	dir, err := os.MkdirTemp("", "deadletter-bench-twin-")
	must(err)
	defer os.RemoveAll(dir)
	tw, err := twin.Start(context.Background(), dir, made.Twin, "incident", 1, time.Now())
	must(err)
	defer tw.Place().Forget()
	defer tw.Close()
	start := time.Now()
	_, err = tw.Advance(context.Background(), tw.Now().Add(24*time.Hour))
	must(err)
	ms := float64(time.Since(start).Microseconds()) / 1000
	return row{name: "twin advance --by 24h (the incident)", ours: fmt.Sprintf("%.0f ms", ms), value: ms, limit: 10000, unit: "ms"}
}

type row struct {
	name, ours, raw string
	ratio, target   float64 // ratio 0: an absolute figure
	value, limit    float64 // absolute: value against limit (0: no target)
	failed          bool    // the measurement could not be made (ours says why): a missed target
	unit            string
}

func printTable(rows []row) int {
	missed := 0
	fmt.Printf("\n%-44s %12s %18s %8s %9s\n", "measurement", "ours", "raw azblob", "ratio", "target")
	for _, r := range rows {
		ratio, target, mark := "", "", ""
		switch {
		case r.failed: // (before its target: a run that failed met none)
			mark, missed = "  MISSED", missed+1
		case r.ratio > 0:
			ratio = fmt.Sprintf("%.2f×", r.ratio)
			target = fmt.Sprintf("≤ %.2f×", r.target)
			if r.ratio > r.target {
				mark, missed = "  MISSED", missed+1
			}
		case r.limit > 0:
			target = fmt.Sprintf("≤ %g %s", r.limit, r.unit)
			if r.value > r.limit {
				mark, missed = "  MISSED", missed+1
			}
		}
		if *smoke {
			mark = ""
		}
		fmt.Printf("%-44s %12s %18s %8s %9s%s\n", r.name, r.ours, r.raw, ratio, target, mark)
	}
	return missed
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "deadletter-bench: "+f+"\n", a...)
	stopAll() // os.Exit skips deferred stops: a leaked Azurite would load the next run
	os.Exit(2)
}

var (
	runningMu sync.Mutex
	running   []*azurite
)

func stopAll() {
	runningMu.Lock()
	defer runningMu.Unlock()
	for _, a := range running {
		a.stop()
	}
	running = nil
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// azurite is one fresh, in-memory Azurite on a free loopback port.
type azurite struct {
	cmd *exec.Cmd
	cs  string
}

func startAzurite() *azurite {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(*azBin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port), "--inMemoryPersistence",
		"--skipApiVersionCheck", "--disableTelemetry", "--silent")
	cmd.SysProcAttr = dieWithParent() // dies with the tool, whatever kills it (where the system can say so)
	must(cmd.Start())
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			fail("Azurite did not listen on %d", port)
		}
	}
	a := &azurite{cmd: cmd}
	runningMu.Lock()
	running = append(running, a)
	runningMu.Unlock()
	a.cs = fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;BlobEndpoint=http://127.0.0.1:%d/devstoreaccount1;", accountKey, port)
	return a
}

func (a *azurite) stop() {
	if a.cmd.ProcessState == nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	}
}

func (a *azurite) raw(name string) *container.Client {
	c, err := azblob.NewClientFromConnectionString(a.cs, nil)
	must(err)
	return c.ServiceClient().NewContainerClient(name)
}

func (a *azurite) ours(name string) *azureblob.Container {
	c, err := azureblob.Open(azureblob.Options{ConnectionString: a.cs, Container: name})
	must(err)
	return c
}

// seed uploads n realistic blobs (1–5 events each) with 32 uploaders; setup, not measured.
func seed(ctx context.Context, c *container.Client, n int) []string {
	_, err := c.Create(ctx, nil)
	must(err)
	gen := scenario.NewBulk(1, time.Now(), rules.DefaultConfig())
	names := make([]string, n)
	bodies := make([][]byte, n)
	for i := range names {
		names[i], bodies[i] = gen.Next()
	}
	parallel(n, 32, func(i int) {
		_, err := c.NewBlockBlobClient(names[i]).Upload(ctx, streaming.NopCloser(bytes.NewReader(bodies[i])), &blockblob.UploadOptions{
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: to.Ptr("application/json")}})
		must(err)
	})
	return names
}

// parallel runs f over 0…n-1, c at a time (the raw SDK's side of a measurement, bounded as deadletter's is).
func parallel(n, c int, f func(i int)) {
	var g errgroup.Group
	g.SetLimit(c)
	for i := 0; i < n; i++ {
		g.Go(func() error { f(i); return nil })
	}
	g.Wait()
}

// noisyRounds is the round count for the cheap, noisy measurements (refresh and hydrate).
func noisyRounds() int {
	if *smoke {
		return 1
	}
	return max(*rounds, 5)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func timeIt(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// phaseRead: refresh (list + classify) and hydrate (download + parse), on one fresh Azurite.
func phaseRead() []row {
	ctx := context.Background()
	az := startAzurite()
	defer az.stop()
	const name = "bench"
	rawC := az.raw(name)
	fmt.Fprintf(os.Stderr, "seeding %d blobs…\n", *nList)
	names := seed(ctx, rawC, max(*nList, *nHydrate))
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	ours := az.ours(name)

	rawList, ourList := benchRefresh(ctx, rawC, ours, cfg)
	rawHyd, ourHyd, bestC := benchHydrate(ctx, rawC, ours, cfg, names[:*nHydrate])
	rl, ol, rh, oh := median(rawList), median(ourList), median(rawHyd), median(ourHyd)
	return []row{
		{name: fmt.Sprintf("refresh %d blobs (list + classify)", *nList), ours: secs(ol), raw: secs(rl), ratio: ol.Seconds() / rl.Seconds(), target: 1.10},
		{name: fmt.Sprintf("hydrate %d blobs (download + parse, c=%d)", *nHydrate, *conc), ours: secs(oh), raw: secs(rh) + fmt.Sprintf(" c=%d", bestC), ratio: oh.Seconds() / rh.Seconds(), target: 1.20},
	}
}

// benchRefresh times a full listing, raw against ours, in alternating rounds.
func benchRefresh(ctx context.Context, rawC *container.Client, ours store.Container, cfg rules.Config) (rawList, ourList []time.Duration) {
	// A 50,000-blob listing on Azurite swings by ±15% between identical runs (an A/B of two transports on one
	// instance showed no difference beyond that): five alternating rounds, like hydrate.
	for r := 0; r < noisyRounds(); r++ {
		// Alternate the order so neither side always runs on a warmer server.
		listRaw := func() { rawList = append(rawList, timeIt(func() { rawListAll(ctx, rawC, *nList) })) }
		listOurs := func() {
			ourList = append(ourList, timeIt(func() {
				s, err := replay.NewLoader(ours, cfg).List(ctx)
				must(err)
				if len(s.Items) < *nList {
					fail("our list saw %d blobs", len(s.Items))
				}
			}))
		}
		if r%2 == 0 {
			listRaw()
			listOurs()
		} else {
			listOurs()
			listRaw()
		}
		fmt.Fprintf(os.Stderr, "refresh round %d: raw %s, ours %s\n", r+1, secs(rawList[r]), secs(ourList[r]))
	}

	return rawList, ourList
}

// benchHydrate times downloading and parsing hyd, raw (at its best concurrency) against ours.
func benchHydrate(ctx context.Context, rawC *container.Client, ours store.Container, cfg rules.Config, hyd []string) (rawHyd, ourHyd []time.Duration, bestC int) {
	rawDownload := func(c int) time.Duration {
		return timeIt(func() {
			parallel(len(hyd), c, func(i int) {
				resp, err := rawC.NewBlobClient(hyd[i]).DownloadStream(ctx, nil)
				must(err)
				_, err = io.ReadAll(resp.Body)
				must(err)
				resp.Body.Close()
			})
		})
	}
	best := time.Duration(1 << 62)
	for _, c := range []int{8, 16, 32, 64} {
		d := rawDownload(c)
		fmt.Fprintf(os.Stderr, "raw download c=%d: %s\n", c, secs(d))
		if d < best {
			best, bestC = d, c
		}
	}
	infos := make([]store.BlobInfo, len(hyd))
	for i, n := range hyd {
		infos[i] = store.BlobInfo{Name: n}
	}
	// Azurite's download rate swings by a third between identical runs; a hydrate round is cheap, so it gets at
	// least five (alternating who goes first) for a median that holds still.
	for r := 0; r < noisyRounds(); r++ {
		if r%2 == 0 { // alternate who goes first, as for refresh
			rawHyd = append(rawHyd, rawDownload(bestC))
		}
		ourHyd = append(ourHyd, timeIt(func() {
			l := replay.NewLoader(ours, cfg) // a fresh cache: every payload is downloaded and parsed
			l.Concurrency = *conc
			got := l.Hydrate(ctx, infos)
			for _, h := range got {
				if h.Summary == nil {
					fail("hydrate %s: %s", h.Name, h.ReadErr)
				}
			}
			if len(got) != len(infos) {
				fail("hydrated %d of %d", len(got), len(infos))
			}
		}))
		if r%2 == 1 {
			rawHyd = append(rawHyd, rawDownload(bestC))
		}
		fmt.Fprintf(os.Stderr, "hydrate round %d: raw %s, ours %s\n", r+1, secs(rawHyd[r]), secs(ourHyd[r]))
	}
	return rawHyd, ourHyd, bestC
}

// rawListAll is the plain SDK listing deadletter's is measured against: pages of 5,000 with metadata.
func rawListAll(ctx context.Context, c *container.Client, want int) {
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(5000)), Include: container.ListBlobsInclude{Metadata: true}})
	n := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		must(err)
		n += len(p.Segment.BlobItems)
	}
	if n < want {
		fail("raw list saw %d blobs", n)
	}
}

// phaseDrain: drain of stranded blobs against a plain download + conditional re-upload loop, on its own Azurite.
func phaseDrain() row {
	ctx := context.Background()
	az := startAzurite()
	defer az.stop()
	const name = "drain"
	rawC := az.raw(name)
	fmt.Fprintf(os.Stderr, "seeding %d blobs…\n", *nDrain)
	names := seed(ctx, rawC, *nDrain)
	cfg := rules.DefaultConfig()
	cfg.TTL = time.Second // Azure cannot backdate: a blob strands a second after its last write
	ours := az.ours(name)
	strand := func() { time.Sleep(2 * time.Second) }
	var rawD, ourD []time.Duration
	rawDrain := func() {
		rawD = append(rawD, timeIt(func() {
			parallel(len(names), *conc, func(i int) {
				bc := rawC.NewBlobClient(names[i])
				resp, err := bc.DownloadStream(ctx, nil)
				must(err)
				body, err := io.ReadAll(resp.Body)
				must(err)
				resp.Body.Close()
				meta := map[string]*string{"drainCount": to.Ptr("1")}
				for k, v := range resp.Metadata { // the SDK hands keys back re-cased: keep one spelling
					if !strings.EqualFold(k, "drainCount") {
						meta[k] = v
					}
				}
				_, err = rawC.NewBlockBlobClient(names[i]).Upload(ctx, streaming.NopCloser(bytes.NewReader(body)), &blockblob.UploadOptions{
					HTTPHeaders: &blob.HTTPHeaders{BlobContentType: resp.ContentType}, Metadata: meta,
					AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(*resp.ETag))}}})
				must(err)
			})
		}))
	}
	ourDrain := func() {
		s, err := replay.NewLoader(ours, cfg).List(ctx)
		must(err)
		targets := cfg.DrainTargets(s)
		if len(targets) != len(names) {
			fail("%d of %d blobs stranded before our drain", len(targets), len(names))
		}
		ourD = append(ourD, timeIt(func() {
			res, err := replay.Drain(ctx, ours, cfg, targets, rules.DrainOptions{Concurrency: *conc})
			must(err)
			for _, r := range res {
				if r.Outcome != rules.OutcomeDrained {
					fail("drain %s: %s %s", r.Name, r.Outcome, present.Reason(r.Reason, present.ForceFlag))
				}
			}
		}))
	}
	for r := 0; r < *rounds; r++ {
		// Azurite slows as overwritten blobs pile up: alternate who goes first so neither always meets the
		// busier server.
		first, second := rawDrain, ourDrain
		if r%2 == 1 {
			first, second = ourDrain, rawDrain
		}
		strand()
		first()
		strand()
		second()
		fmt.Fprintf(os.Stderr, "drain round %d: raw %s, ours %s\n", r+1, secs(rawD[r]), secs(ourD[r]))
	}
	rd, od := median(rawD), median(ourD)
	return row{name: fmt.Sprintf("drain %d stranded blobs (c=%d)", *nDrain, *conc), ours: secs(od), raw: secs(rd), ratio: od.Seconds() / rd.Seconds(), target: 1.20}
}

// phaseRSS writes n blobs into a directory and measures, in a child process of its own, the peak RSS of holding
// all of them listed and hydrated (the dashboard's state after a full read).
func phaseRSS() row {
	dir, err := os.MkdirTemp("", "deadletter-rss-")
	must(err)
	defer os.RemoveAll(dir)
	gen := scenario.NewBulk(2, time.Now(), rules.DefaultConfig())
	for i := 0; i < *nRSS; i++ {
		name, body := gen.Next()
		name = strings.Replace(name, ".json", fmt.Sprintf("-%d.json", i), 1)
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, body, 0o644))
	}
	self, err := os.Executable()
	must(err)
	out, err := exec.Command(self, "-rss-child", dir).Output()
	must(err)
	kb, err := strconv.Atoi(strings.TrimSpace(string(out)))
	must(err)
	mb := float64(kb) / 1024
	return row{name: fmt.Sprintf("peak RSS holding %d hydrated blobs", *nRSS), ours: fmt.Sprintf("%.0f MB", mb), value: mb, limit: 250, unit: "MB"}
}

func holdAndReport(dir string) {
	ctx := context.Background()
	d, err := dirstore.Open(dir)
	must(err)
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	l := replay.NewLoader(d, cfg)
	s, err := l.List(ctx)
	must(err)
	l.HydrateWhere(ctx, s, nil)
	for _, it := range s.Items {
		if it.Summary == nil {
			fail("not hydrated: %s", it.Name)
		}
	}
	if p := os.Getenv("DEADLETTER_BENCH_HEAPPROFILE"); p != "" { // go tool pprof -sample_index=inuse_space
		hf, err := os.Create(p)
		must(err)
		runtime.GC()
		must(pprof.WriteHeapProfile(hf))
		hf.Close()
	}
	f, err := os.Open("/proc/self/status")
	must(err)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fmt.Println(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	_ = s.Items[len(s.Items)-1] // keep the snapshot alive until the measurement
}

// phaseDashboard: the dashboard at n rows, through testing.Benchmark.
func phaseDashboard() []row {
	ctx := context.Background()
	mem := storetest.NewMem(time.Now())
	gen := scenario.NewBulk(3, time.Now(), rules.DefaultConfig())
	for i := 0; i < *nRows; i++ {
		name, body := gen.Next()
		mem.Write(ctx, strings.Replace(name, ".json", fmt.Sprintf("-%d.json", i), 1), body, store.WriteOptions{})
	}
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	l := replay.NewLoader(mem, cfg)
	s, err := l.List(ctx)
	must(err)
	l.HydrateWhere(ctx, s, nil) // fills the cache, so the dashboard's first refresh has every summary
	model := func() tea.Model {
		db := newDashboard(l, 160, 48)
		db.run(db.listed)
		return db.m
	}
	per := func(f func(b *testing.B)) (string, float64) {
		res := testing.Benchmark(f)
		ms := float64(res.NsPerOp()) / 1e6
		return fmt.Sprintf("%.3f ms", ms), ms
	}
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	move, moveMs := per(func(b *testing.B) {
		m := model()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.Update(down)
			m.View()
		}
	})
	key, keyMs := per(func(b *testing.B) {
		m := model()
		m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
			m.View()
		}
	})
	view, viewMs := per(func(b *testing.B) {
		m := model()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.View()
		}
	})
	over, overMs := per(func(b *testing.B) {
		m := model()
		m.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.View()
		}
	})
	n := *nRows
	return []row{
		{name: fmt.Sprintf("dashboard %d rows: overview View", n), ours: over, value: overMs, limit: 5, unit: "ms"},
		{name: fmt.Sprintf("dashboard %d rows: cursor move (Update+View)", n), ours: move, value: moveMs, limit: 0.5, unit: "ms"},
		{name: fmt.Sprintf("dashboard %d rows: filter keystroke", n), ours: key, value: keyMs},
		{name: fmt.Sprintf("dashboard %d rows: View", n), ours: view, value: viewMs, limit: 0.5, unit: "ms"},
	}
}
