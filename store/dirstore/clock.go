package dirstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"
)

// Clock is a directory container's service time, when it has one of its own (a rehearsal twin's): At is the time
// it showed at the wall-clock instant Wall, and it runs Speed times as fast as the wall clock since (0: stopped).
// Every command reads it as the service's clock — ages, panes, expiry — and every write takes it as its
// Last-Modified, as Azure stamps a blob with its own clock.
//
// A clock is never read from the container: a file in a directory is data, never configuration. The twin keeps
// its clock in the operator's state directory (internal/made) and hands its path to the Dir (UseClockFile).
type Clock struct {
	At    time.Time `json:"at"`
	Wall  time.Time `json:"wall"`
	Speed float64   `json:"speed"`
	// Until, when set, is the wall-clock instant the clock stops at unless its runner renews it: a rehearsal
	// killed with its clock running leaves it stopped a moment later, not racing on.
	Until time.Time `json:"until,omitzero"`
}

// The bounds of a clock: a speed of at most MaxSpeed (over a day a second), a time between MinTime and MaxTime.
// Within them time never runs backwards and never overflows.
const MaxSpeed = 100_000

var (
	MinTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Check says what is wrong with a clock, naming the field; nil when it is within its bounds.
func (c Clock) Check() error {
	switch {
	case math.IsNaN(c.Speed) || c.Speed < 0 || c.Speed > MaxSpeed:
		return fmt.Errorf("speed %v: want 0 (stopped) to %d", c.Speed, MaxSpeed)
	case c.At.Before(MinTime) || c.At.After(MaxTime):
		return fmt.Errorf("at %s: want a time between %d and %d", c.At.Format(time.RFC3339), MinTime.Year(), MaxTime.Year())
	case c.Speed > 0 && (c.Wall.Before(MinTime) || c.Wall.After(MaxTime)):
		return fmt.Errorf("wall %s: want a time between %d and %d", c.Wall.Format(time.RFC3339), MinTime.Year(), MaxTime.Year())
	}
	return nil
}

// Now is the clock's time at the wall-clock instant wall: never before At (a wall clock set back does not run
// it backwards) and never past MaxTime.
func (c Clock) Now(wall time.Time) time.Time {
	if c.Speed <= 0 || math.IsNaN(c.Speed) || !wall.After(c.Wall) {
		return c.At.UTC()
	}
	if !c.Until.IsZero() && wall.After(c.Until) {
		wall = c.Until
	}
	ahead := float64(wall.Sub(c.Wall)) * min(c.Speed, MaxSpeed)
	if limit := float64(MaxTime.Sub(c.At)); !(ahead < limit) {
		return MaxTime
	}
	return c.At.Add(time.Duration(max(ahead, 0))).UTC()
}

// ReadClock reads a clock file (a twin's, in the operator's state directory): ok is false when there is none.
// It is read as the state directory's other files are: a regular file only, opened without blocking (a FIFO in
// its place cannot hang a command) and never through a link, at most 64 KiB, decoded strictly — every field
// known, none twice, at given — and a clock out of its bounds is an error naming the field.
func ReadClock(path string) (c Clock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Clock{}, false, nil
	}
	if err != nil {
		return Clock{}, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a twin's clock", path, refusedWhy(fi.Mode()))
		}
		return Clock{}, false, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return Clock{}, false, err
	}
	if err := decodeClock(b, &c); err != nil {
		return Clock{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Check(); err != nil {
		return Clock{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return c, true, nil
}

// decodeClock decodes a clock strictly: one JSON object of Clock's fields, each at most once, at given — {} is
// no clock, never the zero time that reads as the wall clock.
func decodeClock(b []byte, c *Clock) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a clock: want a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[strings.ToLower(key)] {
			return fmt.Errorf("field %q twice", key)
		}
		seen[strings.ToLower(key)] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	strict := json.NewDecoder(bytes.NewReader(b))
	strict.DisallowUnknownFields()
	if err := strict.Decode(c); err != nil {
		return err
	}
	if !seen["at"] {
		return errors.New("no at: the clock's time is missing")
	}
	return nil
}

// UseClockFile makes the Dir read its service time from a clock file (a twin's: the caller proved the directory
// is one), re-read whenever it changes; "" is the local clock again.
func (d *Dir) UseClockFile(path string) {
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	d.clockPath, d.hasClock, d.clockStat, d.clockErr = path, false, nil, nil
}

// clockFailed is why a twin's clock cannot be read, when it never could: the commands stop rather than take the
// local clock for the twin's (a rehearsal's blobs would show ages years off). nil once it has been read.
func (d *Dir) clockFailed() error {
	d.now()
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	if d.hasClock || d.clockErr == nil {
		return nil
	}
	return fmt.Errorf("the twin's clock cannot be read: %w", d.clockErr)
}

// SetClock makes this Dir read its time from now (the twin's own clock, as it steps) instead of the clock file
// or the local clock; nil undoes it.
func (d *Dir) SetClock(now func() time.Time) { d.clockFn.Store(&now) }

// Rehearsal reports whether the Dir's time is a twin's clock rather than the local clock (every output says so).
func (d *Dir) Rehearsal() bool {
	if f := d.clockFn.Load(); f != nil && *f != nil {
		return true
	}
	d.now()
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	return d.hasClock
}

// now is the container's service time: a clock set on this Dir, else its clock file, else the local clock. The
// clock file is read again only when it changed (a new file — it is replaced whole — or a new size or time), so
// a listing of 100,000 blobs costs a stat per page. A clock file that cannot be read or is out of bounds keeps
// the last good clock (a twin's clock never silently becomes the local one).
func (d *Dir) now() time.Time {
	if f := d.clockFn.Load(); f != nil && *f != nil {
		return (*f)().UTC()
	}
	wall := time.Now()
	d.clockMu.Lock()
	defer d.clockMu.Unlock()
	if d.clockPath == "" {
		return wall.UTC()
	}
	fi, err := os.Lstat(d.clockPath)
	if err == nil && (d.clockStat == nil || !os.SameFile(fi, d.clockStat) || !fi.ModTime().Equal(d.clockStat.ModTime()) || fi.Size() != d.clockStat.Size()) {
		c, ok, rerr := ReadClock(d.clockPath)
		switch {
		case rerr == nil && ok:
			d.clock, d.hasClock, d.clockStat, d.clockErr = c, true, fi, nil
		case rerr != nil:
			d.clockErr = rerr
		}
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
