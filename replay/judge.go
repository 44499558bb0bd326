package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Config holds the estate's settings the rules depend on.
type Config struct {
	// TTL is the replay trigger's delivery window (EVENT_GRID_DELIVERY_TTL_MINUTES): a root blob older than it
	// can no longer be reached by its BlobCreated trigger.
	TTL time.Duration
	// LiveGrace is how long a root blob may sit inside the TTL before its stillness means the replay is not
	// consuming.
	LiveGrace time.Duration
	// Retention is the lifecycle rule: every blob is deleted this long after its last modification.
	Retention time.Duration
	// MaxReplays is MAX_DEAD_LETTER_REPLAY_ATTEMPTS.
	MaxReplays int
	// Separator is ID_SEPARATOR.
	Separator string
	// Handlers is the handler register; nil when none was given, and then bars 2–3 are unknown.
	Handlers Register
}

// DefaultConfig is the estate's configuration.
func DefaultConfig() Config {
	return Config{TTL: 60 * time.Minute, LiveGrace: 10 * time.Minute, Retention: 30 * 24 * time.Hour, MaxReplays: 2, Separator: DefaultSeparator}
}

// Register maps every eventType the estate routes to whether its handler is idempotent
// (AzureFunctionIsIdempotentMap).
type Register map[string]bool

// ParseRegister reads a handler register: a JSON object whose every value is true or false.
func ParseRegister(b []byte) (Register, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		if pe := jsonError(err, -1); pe.Offset >= 0 {
			return nil, fmt.Errorf("handler register: %s", pe.Error())
		}
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true (idempotent) or false, got %s", kindOf(b))
	}
	if raw == nil {
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true or false, got null")
	}
	reg := make(Register, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := bytes.TrimSpace(raw[k])
		switch string(v) {
		case "true":
			reg[k] = true
		case "false":
			reg[k] = false
		default:
			return nil, fmt.Errorf("handler register: %q is %s, want true (idempotent) or false", k, kindOf(v))
		}
	}
	return reg, nil
}

// LoadRegister reads a handler register file.
func LoadRegister(path string) (Register, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("handler register: %w", err)
	}
	reg, err := ParseRegister(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reg, nil
}

// Verdict is one bar of the estate's per-event judgement, or its pass.
type Verdict string

// The verdicts, in the order the estate applies the bars.
const (
	VerdictCap           Verdict = "cap"
	VerdictUnroutable    Verdict = "unroutable"
	VerdictNotIdempotent Verdict = "notIdempotent"
	VerdictReplay        Verdict = "replay"
	// VerdictUnknown stands for bars 2–3 when no handler register was given.
	VerdictUnknown Verdict = "unknown"
)

// AllVerdicts lists every verdict in display order.
var AllVerdicts = []Verdict{VerdictReplay, VerdictCap, VerdictNotIdempotent, VerdictUnroutable, VerdictUnknown}

// Judgement is what the estate decides for one event.
type Judgement struct {
	ReplayID
	// Verdicts holds every bar the event fails, in the estate's order, or just VerdictReplay. The first one is
	// what the replay function acts on.
	Verdicts []Verdict
}

// Replayable reports whether the estate republishes the event.
func (j Judgement) Replayable() bool { return len(j.Verdicts) == 1 && j.Verdicts[0] == VerdictReplay }

// Known reports whether the fate is certain without a register: either it is replayable, or a bar it certainly
// fails already quarantines it.
func (j Judgement) Known() bool { return j.Verdicts[0] != VerdictUnknown }

// Primary is the verdict the replay function acts on.
func (j Judgement) Primary() Verdict { return j.Verdicts[0] }

// Judge applies checkIsReplayable's bars to one event: the attempt cap, then routing, then idempotency. Every
// failed bar is reported, not only the first.
func (c Config) Judge(id, eventType string) Judgement {
	j := Judgement{ReplayID: ParseID(id, c.Separator)}
	if j.Attempt >= c.MaxReplays {
		j.Verdicts = append(j.Verdicts, VerdictCap)
	}
	if c.Handlers == nil {
		j.Verdicts = append(j.Verdicts, VerdictUnknown)
		return j
	}
	idempotent, routed := c.Handlers[eventType]
	switch {
	case !routed:
		j.Verdicts = append(j.Verdicts, VerdictUnroutable)
	case !idempotent:
		j.Verdicts = append(j.Verdicts, VerdictNotIdempotent)
	}
	if len(j.Verdicts) == 0 {
		j.Verdicts = []Verdict{VerdictReplay}
	}
	return j
}

// QuarantineReason derives why the estate quarantined an event of a (well-formed) quarantine blob. The replay
// strips counts from quarantined ids, so a cap is inferred: an event that would pass every other bar can only
// have been stopped by it.
func (c Config) QuarantineReason(id, eventType string) Verdict {
	j := c.Judge(id, eventType)
	for _, v := range j.Verdicts {
		if v != VerdictCap {
			if v == VerdictReplay {
				return VerdictCap
			}
			return v
		}
	}
	return VerdictCap
}

// VerdictsString renders verdicts for humans: "cap+notIdempotent".
func VerdictsString(vs []Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, "+")
}
