package made

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A record is trusted only for the directory it names that holds its id; a newer format is refused, never
// half-read; a second lock says who holds the first.
func TestARecordIsTrustedOnlyWhereItPoints(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	if _, err := Find(dir); !IsNotMade(err) {
		t.Fatalf("a directory never made: %v", err)
	}
	p, err := Make(dir, Twin)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Find(dir); err != nil || got.ID != p.ID || got.Kind != Twin {
		t.Fatalf("found %+v %v", got, err)
	}
	if fi, _ := os.Stat(p.Folder()); fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the record's folder is %v: others could read a twin's payloads", fi.Mode().Perm())
	}
	held, err := p.Lock("twin advance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Lock("twin status"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "twin advance (process") {
		t.Fatalf("a second lock: %v", err)
	}
	held.Unlock()
	if h, err := p.Lock("again"); err != nil {
		t.Fatalf("after unlock: %v", err)
	} else {
		h.Unlock()
	}
	os.WriteFile(filepath.Join(dir, ".deadletter", "made"), []byte("another id\n"), 0o644)
	if _, err := Find(dir); !IsNotMade(err) {
		t.Fatalf("a directory holding another id: %v", err)
	}
	newer, _ := json.Marshal(Record{Format: Format + 1, Kind: Twin, ID: "x", Dir: p.Dir})
	WriteFile(p.File("record.json"), newer)
	if _, err := Find(dir); err == nil || IsNotMade(err) || !strings.Contains(err.Error(), "newer deadletter") {
		t.Fatalf("a newer format: %v", err)
	}
}
