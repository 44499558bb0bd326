package dirstore

// SetUnsynced stops (or restarts) syncing each write — its file and its folder — for a bulk copy that is
// resumable whatever a crash leaves (twin start --from): a million synced writes take hours. Flush then makes
// everything written durable at once. Where the system offers no such flush (only Linux's syncfs is used), it is
// refused: it returns false and every write stays synced.
func (d *Dir) SetUnsynced(on bool) bool {
	if on && !canFlush {
		return false
	}
	d.unsynced = on
	return true
}

// Flush makes every write to the Dir's file system durable (syncfs), after writes SetUnsynced left unsynced.
func (d *Dir) Flush() error { return flush(d.root) }
