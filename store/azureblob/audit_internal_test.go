package azureblob

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// An audit blob is rotated before its block limit and each day: with the limit lowered to 3 blocks, 7 lines take
// three blobs of the day and read back in order; the next day starts its own.
func TestTheAuditLogRotatesBeforeTheBlockLimit(t *testing.T) {
	t.Parallel()
	cs := os.Getenv("DEADLETTER_AZURITE")
	if cs == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("DEADLETTER_AZURITE is not set: run ./test.sh")
		}
		t.Skip("DEADLETTER_AZURITE is not set: run ./test.sh to include the Azurite tests")
	}
	name := fmt.Sprintf("t-audit-%d", time.Now().UnixNano()%1e9)
	c, err := Open(Options{ConnectionString: cs, Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.AuditLog(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.client.Delete(context.Background(), nil)
	day := time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC)
	l.now, l.maxBlocks = func() time.Time { return day }, 3
	for i := 0; i < 7; i++ {
		if err := l.Append(ctx, []byte(fmt.Sprintf("line %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	day = day.Add(2 * time.Hour)
	if err := l.Append(ctx, []byte("next day\n")); err != nil {
		t.Fatal(err)
	}
	srcs, err := l.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var all strings.Builder
	for _, s := range srcs {
		names = append(names, s.Name[strings.LastIndexByte(s.Name, '/')+1:])
		all.Write(s.Data)
	}
	want := "2026-12-02.0000.jsonl 2026-12-02.0001.jsonl 2026-12-02.0002.jsonl 2026-12-03.0000.jsonl"
	if strings.Join(names, " ") != want {
		t.Fatalf("blobs %v, want %s", names, want)
	}
	if got := all.String(); got != "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nnext day\n" {
		t.Fatalf("read back %q", got)
	}
}

// The record names an Entra ID principal from its token's claims: the UPN first, the object id last; a token that
// is not a JWT names no one.
func TestPrincipalOfAToken(t *testing.T) {
	t.Parallel()
	jwt := func(claims string) string {
		return "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".sig"
	}
	for claims, want := range map[string]string{
		`{"upn":"alice@contoso.com","name":"Alice","oid":"0000-1"}`: "alice@contoso.com",
		`{"name":"deploy-bot","oid":"0000-2"}`:                      "deploy-bot",
		`{"oid":"0000-3"}`:                                          "0000-3",
		`not json`:                                                  "",
	} {
		if got := principalOf(jwt(claims)); got != want {
			t.Errorf("%s: %q, want %q", claims, got, want)
		}
	}
	if principalOf("opaque-token") != "" {
		t.Error("an opaque token named someone")
	}
}
