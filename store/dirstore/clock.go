package dirstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// clockFile is the state file that gives a directory container a clock of its own: the rehearsal twin's.
const clockFile = "clock.json"

// Clock is a directory container's service time, when it has one of its own (a rehearsal): At is the time it
// showed at the wall-clock instant Wall, and it runs Speed times as fast as the wall clock since (0: stopped).
// Every command reads it as the service's clock — ages, panes, expiry — and every write takes it as its
// Last-Modified, as Azure stamps a blob with its own clock.
type Clock struct {
	At    time.Time `json:"at"`
	Wall  time.Time `json:"wall"`
	Speed float64   `json:"speed"`
	// Until, when set, is the wall-clock instant the clock stops at unless its runner renews it: a rehearsal
	// killed with its clock running leaves it stopped a moment later, not racing on.
	Until time.Time `json:"until,omitzero"`
}

// Now is the clock's time at the wall-clock instant wall.
func (c Clock) Now(wall time.Time) time.Time {
	if c.Speed == 0 {
		return c.At
	}
	if !c.Until.IsZero() && wall.After(c.Until) {
		wall = c.Until
	}
	return c.At.Add(time.Duration(float64(wall.Sub(c.Wall)) * c.Speed)).UTC()
}

// ReadClock reads a directory's clock; ok is false when it has none (the local clock is its time).
func ReadClock(root string) (c Clock, ok bool, err error) {
	b, err := ReadState(root, clockFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Clock{}, false, nil
	}
	if err != nil {
		return Clock{}, false, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Clock{}, false, fmt.Errorf("%s: %w", clockFile, err)
	}
	return c, true, nil
}

// WriteClock sets a directory's clock (durably: every process that opens the directory reads it).
func WriteClock(root string, c Clock) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return WriteState(root, clockFile, b)
}

// SetClock makes this Dir read its time from now (the twin's own clock, as it steps) instead of the clock file
// or the local clock; nil undoes it.
func (d *Dir) SetClock(now func() time.Time) { d.clockFn.Store(&now) }

// now is the container's service time: a clock set on this Dir, else the directory's clock file, else the local
// clock. The clock file is read again only when it changed (a new file — it is replaced whole — or a new size or time), so a listing of
// 100,000 blobs costs a stat per page.
func (d *Dir) now() time.Time {
	if f := d.clockFn.Load(); f != nil && *f != nil {
		return (*f)().UTC()
	}
	wall := time.Now()
	fi, err := os.Stat(filepath.Join(d.root, stateDir, clockFile))
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	switch {
	case err != nil:
		d.hasClock, d.clockStat = false, nil
	case d.clockStat == nil || !os.SameFile(fi, d.clockStat) || !fi.ModTime().Equal(d.clockStat.ModTime()) || fi.Size() != d.clockStat.Size():
		c, ok, err := ReadClock(d.root)
		d.clock, d.hasClock, d.clockStat = c, ok && err == nil, fi
	}
	if d.hasClock {
		return d.clock.Now(wall)
	}
	return wall.UTC()
}

// stamp is the Last-Modified a write takes when the container keeps a clock of its own (ok false: the file
// system's own time is right).
func (d *Dir) stamp() (time.Time, bool) {
	if f := d.clockFn.Load(); f != nil && *f != nil {
		return d.now(), true
	}
	t := d.now()
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	return t, d.hasClock
}

func noStamp() (time.Time, bool) { return time.Time{}, false }
