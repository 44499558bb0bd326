package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const (
	egTopic = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/topics/estate-events"
	egOther = "/subscriptions/00000000-0000-0000-0000-000000000002/resourceGroups/estate/providers/Microsoft.EventGrid/topics/partner"
	egSys   = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/systemTopics/estate-storage"
)

// The witness's keys: event-grid-topics as a list (or one ID), replay-system-topic, witness-window, each set on
// its flag; a resource ID that is not an Event Grid topic is said with its line.
func TestWitnessContextKeys(t *testing.T) {
	p := writeConfig(t, "contexts:\n  - name: prod\n    account-url: https://estate.blob.core.windows.net\n    event-grid-topics:\n      - "+egTopic+
		"\n      - "+egOther+"\n    replay-system-topic: "+egSys+"\n    witness-window: 30m\n  - name: dev\n    connection-string-env: DL_TEST_NOT_SET\n    event-grid-topics: "+egTopic+"\n")
	cf, err := readConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(stdio{})
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	a.globalFlags(fs)
	if _, err := applyContext(fs, cf.find("prod")); err != nil {
		t.Fatal(err)
	}
	g := a.g
	if len(g.eventGridTopics) != 2 || g.eventGridTopics[0] != egTopic || g.eventGridTopics[1] != egOther || g.replaySystemTopic != egSys || g.witnessWindow != 30*time.Minute {
		t.Errorf("flags from the context: %q %q %s", g.eventGridTopics, g.replaySystemTopic, g.witnessWindow)
	}
	if v := cf.find("dev").Values["event-grid-topics"]; v != egTopic {
		t.Errorf("one topic as a scalar: %q", v)
	}
	for _, tc := range []struct{ body, want string }{
		{"event-grid-topics:\n      - estate-events\n", ":5: event-grid-topics: \"estate-events\" is not an Azure resource ID"},
		{"replay-system-topic: /subscriptions/x/resourceGroups/r/providers/Microsoft.Storage/storageAccounts/s\n", ":4: replay-system-topic:"},
		{"event-grid-topics:\n      - [a]\n", ":5: event-grid-topics: want a list"},
	} {
		_, err := readConfig(writeConfig(t, "contexts:\n  - name: a\n    dir: /tmp\n    "+tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
}

// A context in by connection string (or a directory) has no ARM token: its witness says so, it never guesses.
func TestWitnessNeedsEntraID(t *testing.T) {
	g := newApp(stdio{}).g
	if g.witness() != nil {
		t.Error("a witness with no topic named")
	}
	g.connString, g.eventGridTopics = "UseDevelopmentStorage=true", []string{egTopic}
	rep := readWitness(context.Background(), g.witness(), time.Now())
	if !strings.Contains(rep.None, "no Event Grid witness: needs Entra ID") || len(rep.Handlers) != 0 {
		t.Errorf("connection-string witness: %+v", rep)
	}
}
