package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/output"
)

type lsNames struct {
	Blobs []struct {
		Name         string `json:"name"`
		LastModified string `json:"lastModified"`
		Events       int    `json:"events"`
	} `json:"blobs"`
}

func lsNamesOf(t *testing.T, args ...string) lsNames {
	t.Helper()
	var l lsNames
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"ls", "-o", "json"}, args...)...)), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// Issue 54's first done-when: a twin whose script stops the Function App for two hours. At the start its worker
// re-uploads every blob stranded by then (their Last-Modified is the start's time) and the replay takes them; no
// blob stranded before the start is left but those the rules skip (younger than the TTL at the start). drain
// --dry-run just before the start names what the start will take, with a handled blob that lingers; the twin's
// account then counts that blob's events republished a second time.
func TestTheAppsStartDrainsWhatStrandedDuringItsStop(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "app", "stop", "--until", "+2h", "--dir", dir)
	// A handled blob that lingers: the replay archived it, and its original is back (as a delete that failed
	// leaves it). Written while the app is down, its trigger never reaches the replay.
	arch := lsNamesOf(t, "--dir", dir, "--pane", "archived")
	var handled string
	var handledEvents int
	for _, b := range arch.Blobs {
		if b.Events > 0 {
			handled, handledEvents = strings.TrimPrefix(b.Name, "archived/"), b.Events
			break
		}
	}
	if handled == "" {
		t.Fatal("no archived blob to make a lingering original of")
	}
	body, err := os.ReadFile(filepath.Join(dir, "archived", filepath.FromSlash(handled)))
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(dir, filepath.FromSlash(handled))
	if err := os.MkdirAll(filepath.Dir(orig), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orig, body, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "twin", "advance", "--by", "1h59m", "--dir", dir)

	var res output.ResultsJSON
	if err := json.Unmarshal([]byte(mustRun(t, "drain", "--dry-run", "--json", "--dir", dir)), &res); err != nil {
		t.Fatal(err)
	}
	stranded := lsNamesOf(t, "--dir", dir, "--pane", "stranded")
	if res.AppStart == nil || res.AppStart.Takes != len(stranded.Blobs) || len(stranded.Blobs) < 10 {
		t.Fatalf("a minute before the start: %d stranded, the start would take %+v", len(stranded.Blobs), res.AppStart)
	}
	var said []string
	for _, h := range res.AppStart.Handled {
		said = append(said, string(h))
	}
	if !slices.Contains(said, handled) {
		t.Fatalf("the start's handled blobs %v do not name the lingering %s", said, handled)
	}
	var status struct {
		Clock string `json:"clock"`
	}
	json.Unmarshal([]byte(mustRun(t, "twin", "status", "--json", "--dir", dir)), &status)
	clock, _ := time.Parse(time.RFC3339, status.Clock)
	start := clock.Add(time.Minute)

	mustRun(t, "twin", "advance", "--by", "1m", "--dir", dir)
	after := map[string]string{}
	for _, b := range lsNamesOf(t, "--dir", dir).Blobs {
		after[b.Name] = b.LastModified
	}
	for _, b := range stranded.Blobs {
		lm, ok := after[b.Name]
		if !ok {
			continue // replayed already, within the start's minute
		}
		if at, _ := time.Parse(time.RFC3339, lm); !at.Equal(start) {
			t.Errorf("%s: Last-Modified %s after the start at %s: not re-uploaded", b.Name, lm, start.Format(time.RFC3339))
		}
	}
	mustRun(t, "twin", "advance", "--by", "30m", "--dir", dir)
	left := lsNamesOf(t, "--dir", dir, "--pane", "stranded", "--filter", "-is:crash")
	for _, b := range left.Blobs {
		if slices.ContainsFunc(stranded.Blobs, func(s struct {
			Name         string `json:"name"`
			LastModified string `json:"lastModified"`
			Events       int    `json:"events"`
		}) bool {
			return s.Name == b.Name
		}) {
			t.Errorf("%s, stranded before the start, is stranded still half an hour after it", b.Name)
		}
	}
	var st struct {
		Account struct {
			RepublishedTwice int `json:"republishedTwice"`
		} `json:"account"`
		Starts []output.AppStartRunJSON `json:"starts"`
	}
	json.Unmarshal([]byte(mustRun(t, "twin", "status", "--json", "--dir", dir)), &st)
	if st.Account.RepublishedTwice != handledEvents {
		t.Errorf("the account counts %d event(s) republished twice; the lingering blob held %d", st.Account.RepublishedTwice, handledEvents)
	}
	last := st.Starts[len(st.Starts)-1]
	if !last.Ran || last.Reuploaded == nil || *last.Reuploaded != len(stranded.Blobs) || *last.Handled != 1 {
		t.Errorf("the start: %+v (want %d re-uploaded, 1 handled)", last, len(stranded.Blobs))
	}
	if out := mustRun(t, "twin", "status", "--dir", dir); !strings.Contains(out, "republished a second time by a start of the Function App") {
		t.Errorf("twin status does not say the events republished twice:\n%s", out)
	}
}

// The app's edits refuse what does not fit: --workers on a stop or a restart; a stop around a scripted scale-out.
// The witness's resource IDs given by flag or environment are checked as the config file's are.
func TestTheAppsEditsAndIDsAreChecked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	for _, args := range [][]string{
		{"app", "stop", "--workers", "3", "--until", "+1h"},
		{"app", "restart", "--workers", "3"},
	} {
		if _, errs, code := runCmd(t, append(append([]string{"twin", "script", "set"}, args...), "--dir", dir)...); code != exitError || !strings.Contains(errs, "--workers") {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
	mustRun(t, "twin", "script", "set", "app", "scale-out", "--workers", "2", "--at", "+30m", "--dir", dir)
	if _, errs, code := runCmd(t, "twin", "script", "set", "app", "stop", "--at", "+5m", "--until", "+1h", "--dir", dir); code != exitError || !strings.Contains(errs, "scale-out") {
		t.Errorf("a stop around a scripted scale-out: exit %d, %s", code, errs)
	}
	for _, args := range [][]string{
		{"--function-app", "garbage"},
		{"--function-app", egTopic},
		{"--event-grid-topics", "estate-events"},
	} {
		if _, errs, code := runCmd(t, append([]string{"ls", "--dir", dir}, args...)...); code != exitError || !strings.Contains(errs, args[0]) {
			t.Errorf("ls %v: exit %d, %s", args, code, errs)
		}
	}
	t.Setenv("DEADLETTER_FUNCTION_APP", "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/a")
	if _, errs, code := runCmd(t, "ls", "--dir", dir); code != exitError || !strings.Contains(errs, "not a Function App") {
		t.Errorf("DEADLETTER_FUNCTION_APP a storage account: exit %d, %s", code, errs)
	}
}
