package dirstore

// SetUnsynced stops (or restarts) syncing each write — its file and its folder — for a bulk copy that is
// resumable whatever a crash leaves (twin start --from): a million synced writes take hours. Flush then makes
// everything written durable at once. Where the system offers no such flush (only Linux's syncfs is used), it is
// refused: it returns false and every write stays synced.
func (d *Dir) SetUnsynced(on bool) bool {
	if on && !canFlush {
		return false
	}
	d.unsynced.Store(on)
	return true
}

// Flush makes every write to the Dir's file system durable (syncfs): what SetUnsynced left unsynced, and what
// was written beside the Dir's own writes (an export's marker, renamed into place just before).
func (d *Dir) Flush() error {
	d.dirty.Store(false)
	return flush(d.root)
}

// FlushWrites is Flush where a write of the Dir was left unsynced since the last one, and nothing otherwise — for a
// rehearsal's step, which may have written nothing: syncfs flushes every file of the file system, others' too.
func (d *Dir) FlushWrites() error {
	if !d.dirty.Load() {
		return nil
	}
	return d.Flush()
}

// synced reports whether a write is synced one by one, and marks the Dir dirty when it is not.
func (d *Dir) synced() bool {
	if d.unsynced.Load() {
		d.dirty.Store(true)
		return false
	}
	return true
}
