package record

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deadletter/deadletter/internal/opfile"
)

// The lines a shared record refused are kept beside the local log, one file per shared place, and sent again
// before the next line this machine appends there: an outcome the audit container did not take (a 503, a network
// that dropped) reaches it later, so the action does not read as interrupted to every other operator for ever.
// Readers take a record written twice as one (by its id and phase), so a line sent again after all is harmless.
const pendingDir = "shared-pending"

// pendingPath is the file of the lines waiting for the shared place named where.
func (d *Dir) pendingPath(where string) string {
	sum := sha256.Sum256([]byte(where))
	return filepath.Join(d.path, pendingDir, hex.EncodeToString(sum[:8])+".jsonl")
}

// pend keeps a line the shared place refused, to send it again.
func (d *Dir) pend(where string, line []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pendingPath(where)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return appendLine(p, line)
}

// flushPending sends the lines waiting for shared, in order, and forgets those it took; it stops at the first
// the shared place refuses again (the rest wait for the next time).
func (d *Dir) flushPending(ctx context.Context, shared Sink) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pendingPath(shared.Describe())
	// (Bounded by what the local log itself keeps: the parts of one drain of a backlog pended during an outage are
	// tens of megabytes, and a tighter bound left them, and every line after them, never sent.)
	b, err := opfile.ReadRegularNoFollow(p, MaxFiles*MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(b, []byte{'\n'})
	sent := 0
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 || l[len(l)-1] != '\n' { // (a line cut short is dropped: never sent half)
			sent++
			continue
		}
		if err := shared.Append(ctx, l); err != nil {
			break
		}
		sent++
	}
	if sent == len(lines) {
		return os.Remove(p)
	}
	return opfile.Replace(p, bytes.Join(lines[sent:], nil), 0o600)
}
