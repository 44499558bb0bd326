package made

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Held is the lock of a made directory's files, taken: one process at a time runs a twin, so two twin processes
// never step it at once (each would write blobs the other's state does not know).
type Held struct {
	f      *os.File
	holder string // the note saying who holds it
}

// Busy is a lock another process holds: who, as it said when it took it.
type Busy struct {
	Dir    string
	Holder string
}

func (e *Busy) Error() string {
	return fmt.Sprintf("the twin in %s is in use by %s: wait for it to finish, or stop it", e.Dir, e.Holder)
}

// ErrBusy matches a *Busy with errors.Is.
var ErrBusy = errors.New("in use by another process")

func (e *Busy) Is(target error) bool { return target == ErrBusy }

// Lock takes the directory's lock without waiting, saying who holds it (what, this process's id, since when)
// for the next one to read; a lock held elsewhere is a *Busy naming its holder. The lock is the operating
// system's (flock, LockFileEx): it ends with the process, however it ends, so kill -9 leaves no stale lock.
func (p *Place) Lock(what string) (*Held, error) {
	f, err := os.OpenFile(p.File("lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &Busy{Dir: p.Dir, Holder: p.holder()}
		}
		return nil, err
	}
	WriteFile(p.File("holder"), fmt.Appendf(nil, "deadletter %s (process %d, since %s)\n", what, os.Getpid(), time.Now().Format("15:04:05")))
	return &Held{f: f, holder: p.File("holder")}, nil
}

// holder is who holds the lock, as it wrote: a holder that took the lock a moment ago may not have written yet
// (the last one removes its note as it lets go), so a missing note is waited for, briefly.
func (p *Place) holder() string {
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := readSmall(p.File("holder"))
		if h := strings.TrimSpace(string(b)); h != "" {
			return h
		}
		if time.Now().After(deadline) {
			return "another deadletter process"
		}
	}
}

// Unlock lets the next process in.
func (h *Held) Unlock() {
	if h == nil || h.f == nil {
		return
	}
	os.Remove(h.holder)
	unlock(h.f)
	h.f.Close()
	h.f = nil
}
