package rules

import "time"

// DefaultConcurrency is how many blobs are read or acted on at once unless told otherwise: the measured best for
// both downloads and conditional re-uploads against Azure Storage (8–32), and what azcore's transport is sized for.
const DefaultConcurrency = 16

// Config holds the estate's settings the rules depend on, and the thresholds at which a blob needs a human.
type Config struct {
	// TTL is the replay trigger's delivery window (EVENT_GRID_DELIVERY_TTL_MINUTES): a root blob older than it
	// can no longer be reached by its BlobCreated trigger.
	TTL time.Duration
	// LiveGrace is how long a root blob may sit inside the TTL before its stillness means the replay is not
	// consuming.
	LiveGrace time.Duration
	// Retention is the lifecycle rule: every blob is deleted this long after its last modification.
	Retention time.Duration
	// ExpiringWithin: a stranded or quarantined blob this close to lifecycle deletion is about to be lost.
	ExpiringWithin time.Duration
	// MaxReplays is MAX_DEAD_LETTER_REPLAY_ATTEMPTS.
	MaxReplays int
	// Separator is ID_SEPARATOR.
	Separator string
	// Handlers is the handler register; nil when none was given, and then bars 2–3 are unknown.
	Handlers Register
	// MaxAck is the longest an acknowledgement may last (DefaultMaxAck when 0; never past Retention): a longer one
	// is refused when written and, found in a blob's tags, ignored as suspicious.
	MaxAck time.Duration
	// IgnoreAcks makes every acknowledgement silence nothing (check and watch --ignore-acks).
	IgnoreAcks bool
	// StackDepth is the deepest value the estate's runtime serializes (--node-stack-depth), when known; 0 uses
	// the band of the known runtimes (see SafeStackDepth).
	StackDepth int
}

// DefaultConfig is the estate's configuration.
func DefaultConfig() Config {
	return Config{TTL: 60 * time.Minute, LiveGrace: 10 * time.Minute, Retention: 30 * 24 * time.Hour,
		ExpiringWithin: 72 * time.Hour, MaxReplays: 2, Separator: DefaultSeparator}
}

// ExpiresAt is when the lifecycle rule deletes a blob.
func (c Config) ExpiresAt(lastModified time.Time) time.Time { return lastModified.Add(c.Retention) }

// DefaultInterval is how often the dashboard and watch look at the container again unless told otherwise.
const DefaultInterval = 15 * time.Second
