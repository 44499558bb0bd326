package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

type exportOut struct {
	Written []struct {
		Name string
		Size int64
	}
	Refused []struct{ Name, Error string }
	Totals  struct{ Written, Refused int }
}

func exportJSONOf(t *testing.T, args ...string) (exportOut, int) {
	t.Helper()
	out, errs, code := runCmd(t, append(args, "-o", "json")...)
	var r exportOut
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("export -o json printed no JSON document (%v), exit %d:\n%s\n%s", err, code, out, errs)
	}
	return r, code
}

// At any size the text names the first 20 blobs not written and counts the rest; -o json lists every one, with
// totals (more than one chunk of the copy, and the order the listing gave).
func TestExportOutputIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "300")
	n := len(lsJSONOf(t, "--dir", dir).Blobs)
	if n <= replay.ExportChunk {
		t.Fatalf("the seed has %d blobs: not more than one chunk", n)
	}
	to := filepath.Join(t.TempDir(), "export")
	r, code := exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	if code != 0 || len(r.Written) != n || r.Totals.Written != n || len(r.Refused) != 0 {
		t.Fatalf("first export: exit %d, %d written (totals %d) of %d, refused %v", code, len(r.Written), r.Totals.Written, n, r.Refused)
	}
	if _, err := dirstore.ReadState(to, replay.ExportMarker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the export's marker is still there after it finished: %v", err)
	}
	out, _, code := runCmd(t, "export", "--all", "--dir", dir, "--to", to)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 3 || len(lines) != shownRefusals+2 || strings.Count(out, "never written over") != shownRefusals ||
		!strings.Contains(out, fmt.Sprintf("and %d more not written (-o json lists every one); in all, %d the directory held already", n-shownRefusals, n)) ||
		!strings.Contains(out, "0 blob(s)") {
		t.Fatalf("second export, text: exit %d, %d lines:\n%s", code, len(lines), out)
	}
	r, code = exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	if code != 3 || len(r.Written) != 0 || len(r.Refused) != n || r.Totals.Refused != n {
		t.Fatalf("second export, JSON: exit %d, %d written, %d refused (totals %d) of %d", code, len(r.Written), len(r.Refused), r.Totals.Refused, n)
	}
	// A file a crash left short, last of all: the text names it among the 20, before the ones held whole.
	last := r.Refused[n-1].Name
	if err := os.Truncate(filepath.Join(to, filepath.FromSlash(last)), 0); err != nil {
		t.Fatal(err)
	}
	if err := dirstore.WriteState(to, replay.ExportMarker, nil); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCmd(t, "export", "--all", "--dir", dir, "--to", to)
	if lines = strings.Split(strings.TrimSpace(out), "\n"); len(lines) != shownRefusals+2 || !strings.HasPrefix(lines[0], "not written  "+last+": the directory holds a different file") ||
		!strings.Contains(out, fmt.Sprintf("in all, %d the directory held already, 1 of them different from the source", n)) {
		t.Fatalf("the export after a crash, text:\n%s", out)
	}
}

// An export stopped before its files were made durable (its marker left) may have left files short or without
// their properties: the next export compares every name the directory holds with the source and reports one that
// differs — never takes it for exported, never writes over it; one the same is held already as ever; and the
// marker stays, so the export after it compares too. Without the marker (the last export finished) nothing is
// compared.
func TestExportAfterACrashComparesWhatItFinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "5")
	to := filepath.Join(t.TempDir(), "export")
	mustRun(t, "export", "--all", "--dir", dir, "--to", to)
	ctx := context.Background()
	l, err := store.ListAll(ctx, dirOf(t, to))
	if err != nil || len(l.Blobs) < 5 {
		t.Fatalf("exported %d: %v", len(l.Blobs), err)
	}
	short, bare, gone := l.Blobs[0].Name, l.Blobs[1].Name, l.Blobs[2].Name
	// What a crash leaves: a file cut short, one without its side file (metadata, tags), one never there.
	shortPath := filepath.Join(to, filepath.FromSlash(short))
	if err := os.Truncate(shortPath, 3); err != nil {
		t.Fatal(err)
	}
	d, err := dirstore.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Read(ctx, bare, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, bare, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, bare, b.Body, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Backdate(ctx, bare, b.LastModified); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, gone, ""); err != nil {
		t.Fatal(err)
	}
	// …and one whose bytes differ at the same length, every property and its Last-Modified as the source's (a
	// block written from another blob's buffer): only its bytes can tell it apart.
	flipped := l.Blobs[3].Name
	fb, err := d.Read(ctx, flipped, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	body := append([]byte(nil), fb.Body...)
	i := bytes.LastIndex(body, []byte(`"id":"`)) + len(`"id":"`)
	body[i] ^= 0x01 // (one bit of an event's id: still JSON, the same length)
	if _, err := d.Write(ctx, flipped, body, store.WriteOptions{ContentType: fb.ContentType, Metadata: fb.Metadata}); err != nil {
		t.Fatal(err)
	}
	if len(fb.Tags) > 0 {
		if err := d.SetTags(ctx, flipped, fb.Tags, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Backdate(ctx, flipped, fb.LastModified); err != nil {
		t.Fatal(err)
	}

	// Without the marker: held already, as any name (nothing compared).
	r, code := exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	if code != 3 || len(r.Written) != 1 || r.Written[0].Name != gone || errorOf(r, short) != "the directory holds that name already: never written over" {
		t.Fatalf("without the marker: exit %d, %+v", code, r)
	}

	// With it: the two that differ are reported as such and left as they are.
	if err := dirstore.WriteState(to, replay.ExportMarker, []byte("an export cut short\n")); err != nil {
		t.Fatal(err)
	}
	if _, errs, _ := runCmd(t, "export", "--all", "--dir", dir, "--to", to); !strings.Contains(errs, "each name it holds is compared with the source") {
		t.Fatalf("no note that the export compares:\n%s", errs)
	}
	r, code = exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	for _, name := range []string{short, bare, flipped} {
		if e := errorOf(r, name); code != 3 || !strings.Contains(e, "holds a different file under that name") || !strings.Contains(e, "remove it and export again") {
			t.Fatalf("after a crash, %s: exit %d, %q\n%+v", name, code, e, r)
		}
	}
	for _, bi := range l.Blobs[4:] {
		if e := errorOf(r, bi.Name); e != "the directory holds that name already: never written over" {
			t.Fatalf("after a crash, the intact %s: %q", bi.Name, e)
		}
	}
	if fi, err := os.Stat(shortPath); err != nil || fi.Size() != 3 {
		t.Fatalf("the short file was written over: %v %v", fi, err)
	}
	if _, err := dirstore.ReadState(to, replay.ExportMarker); err != nil {
		t.Fatalf("the export that found the marker took it away (the files it reported different are still there): %v", err)
	}

	// The export after it compares too: still different, not held already.
	if r, _ = exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to); !strings.Contains(errorOf(r, short), "holds a different file") {
		t.Fatalf("the export after the one that found the marker: %q", errorOf(r, short))
	}

	// Removed as told, they are exported again.
	os.Remove(shortPath)
	if err := d.Delete(ctx, bare, ""); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, flipped, ""); err != nil {
		t.Fatal(err)
	}
	if r, _ = exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to); len(r.Written) != 3 {
		t.Fatalf("after removing them: %+v", r)
	}
	exportRoundTripped(t, dirOf(t, dir), d)
}

func errorOf(r exportOut, name string) string {
	for _, x := range r.Refused {
		if x.Name == name {
			return x.Error
		}
	}
	return ""
}

// exportRoundTripped fails unless dst holds every blob of src as export copies it.
func exportRoundTripped(t *testing.T, src store.Container, dst *dirstore.Dir) {
	t.Helper()
	ctx := context.Background()
	l, err := store.ListAll(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, bi := range l.Blobs {
		if same, err := holdsAsSource(ctx, dst, src, bi.Name); !same || err != nil {
			t.Fatalf("%s was not exported as it is: %v", bi.Name, err)
		}
	}
}

// Names that differ only by case are refused across the whole export, not only within one chunk of the copy:
// "A.json" is listed first and written, "a.json" (after 512 others, in a later chunk) refused.
func TestExportCaseCollisionsAcrossChunks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := dirstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 * replay.ExportChunk {
		if _, err := src.Write(ctx, fmt.Sprintf("M/2026/11/30/9/B%04d.json", i), []byte(`[]`), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"M/2026/11/30/9/A.json", "M/2026/11/30/9/a.json"} {
		if _, err := src.Write(ctx, n, []byte(`[]`), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	to := filepath.Join(t.TempDir(), "export")
	r, code := exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	if code != 3 || len(r.Refused) != 1 || len(r.Written) != 2*replay.ExportChunk+1 || r.Written[0].Name != "M/2026/11/30/9/A.json" {
		t.Fatalf("exit %d, %d written (first %v), refused %+v", code, len(r.Written), r.Written[:1], r.Refused)
	}
	if x := r.Refused[0]; x.Name != "M/2026/11/30/9/a.json" || !strings.Contains(x.Error, "differs only by case") {
		t.Fatalf("%s: %s", x.Name, x.Error)
	}
}

// An export killed part-way (kill -9: nothing of it runs after) leaves its marker; the next export into the same
// directory compares what it finds: every name it reports held already is the source's blob, one it reports
// different is not, and once those are removed a last export completes the copy.
func TestExportKilledPartWay(t *testing.T) {
	t.Parallel()
	const n = 3000
	dir, src := manyBlobs(t, n)
	ctx := context.Background()
	to := filepath.Join(t.TempDir(), "export")
	cmd := startExporting(t, dir, to)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := dirstore.ReadState(to, replay.ExportMarker); err != nil {
		t.Fatalf("a killed export left no marker: %v", err)
	}
	r, code := exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	if code != 3 || r.Totals.Written+r.Totals.Refused != n || len(r.Written) == n {
		t.Fatalf("after the kill: exit %d, totals %+v", code, r.Totals)
	}
	d, err := dirstore.Open(to)
	if err != nil {
		t.Fatal(err)
	}
	var different []string
	held := len(r.Refused)
	for _, x := range r.Refused {
		same, err := holdsAsSource(ctx, d, src, x.Name)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", x.Name, err)
		case x.Error == "the directory holds that name already: never written over" && same:
		case strings.Contains(x.Error, "holds a different file under that name") && !same:
			different = append(different, x.Name)
		default:
			t.Fatalf("%s, the same as the source: %v, reported %q", x.Name, same, x.Error)
		}
	}
	for _, name := range different {
		if err := d.Delete(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ = exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to); len(r.Written) != len(different) {
		t.Fatalf("after removing the %d different: %+v", len(different), r.Totals)
	}
	exportRoundTripped(t, src, d)
	t.Logf("killed with %d of %d in the directory, %d of them different from the source", held, n, len(different))
}

// An export stopped by a signal makes what it wrote durable before it exits (130): it takes its marker away, and
// the next export finds every name it wrote whole, without comparing.
func TestExportInterrupted(t *testing.T) {
	t.Parallel()
	dir, _ := manyBlobs(t, 3000)
	to := filepath.Join(t.TempDir(), "export")
	cmd := startExporting(t, dir, to)
	cmd.Process.Signal(os.Interrupt)
	if code, _ := exitOf(t, cmd, 60*time.Second); code != exitInterrupted {
		t.Fatalf("exit %d", code)
	}
	if _, err := dirstore.ReadState(to, replay.ExportMarker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an interrupted export left its marker: %v", err)
	}
	r, _ := exportJSONOf(t, "export", "--all", "--dir", dir, "--to", to)
	for _, x := range r.Refused {
		if x.Error != "the directory holds that name already: never written over" {
			t.Fatalf("%s: %s", x.Name, x.Error)
		}
	}
	if len(r.Refused) < 200 || r.Totals.Written+r.Totals.Refused != 3000 {
		t.Fatalf("after the interrupted export: %+v", r.Totals)
	}
}

// manyBlobs is a directory container of n small blobs with metadata.
func manyBlobs(t *testing.T, n int) (string, *dirstore.Dir) {
	t.Helper()
	dir := t.TempDir()
	src, err := dirstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	src.SetUnsynced(true)
	for i := range n {
		if _, err := src.Write(context.Background(), fmt.Sprintf("S/2026/11/30/9/%05d.json", i), []byte(`[{"id":"e"}]`),
			store.WriteOptions{Metadata: map[string]string{"drainCount": "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Flush(); err != nil {
		t.Fatal(err)
	}
	return dir, src
}

// startExporting starts the binary exporting dir into to and returns once it has written 200 blobs.
func startExporting(t *testing.T, dir, to string) *exec.Cmd {
	t.Helper()
	cmd, _, _ := start(t, "export", "--all", "--dir", dir, "--to", to)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ents, _ := os.ReadDir(filepath.Join(to, "S", "2026", "11", "30", "9")); len(ents) >= 200 {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("the export wrote nothing within 60s")
		}
	}
}

// holdsAsSource reports whether dst holds name as the source has it — its bytes, content type, metadata (names in
// any case), index tags and Last-Modified — judged here, field by field, not by the export's own comparison.
func holdsAsSource(ctx context.Context, dst *dirstore.Dir, src store.Container, name string) (bool, error) {
	got, err := dst.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	want, err := src.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	var wantTags map[string]string
	if tr, ok := src.(store.TagReader); ok {
		if wantTags, err = tr.Tags(ctx, name); err != nil {
			return false, err
		}
	}
	lower := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[strings.ToLower(k)] = v
		}
		return out
	}
	if len(wantTags) == 0 {
		wantTags = nil
	}
	gotTags := got.Tags
	if len(gotTags) == 0 {
		gotTags = nil
	}
	return string(got.Body) == string(want.Body) && got.ContentType == want.ContentType &&
		fmt.Sprint(lower(got.Metadata)) == fmt.Sprint(lower(want.Metadata)) && fmt.Sprint(gotTags) == fmt.Sprint(wantTags) &&
		got.LastModified.Equal(want.LastModified), nil
}
