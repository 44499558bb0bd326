package rules

// The replay function serializes with JSON.stringify, which recurses: a value nested deep enough overflows Node's
// stack and the function throws — before it writes or deletes anything when the refused events' quarantine copy
// is too deep, after that copy when a republished event is. Either way the blob is never consumed, every
// redelivery and every drain throws again. How deep is too deep is a property of the runtime (Node's version and
// what is on the stack when the handler runs), not of the estate's code, so the prediction is honest about it:
// below the depth every known runtime serializes, nothing happens; past the depth none does, it is a crash; in
// between it may crash (a warning, not a verdict). --node-stack-depth pins one runtime's depth instead.
// docs/estate.md lists the measurements.

// Serialized depths, counted as Payload.Depth counts (the published or quarantined array included).
const (
	// SafeStackDepth is the deepest value every known runtime serializes in the estate's handler: Node 20,
	// measured in the handler, serializes data nested 4,118 levels (in its event, in the published array: 4,120)
	// and throws from 4,119.
	SafeStackDepth = 4120
	// CertainStackDepth is past what any known runtime serializes: Node 24 overflows at roughly 4,500 levels; the
	// margin covers a host with less on its stack.
	CertainStackDepth = 4600
)

// MinStackDepth is the least a configured stack depth may be: payloads shallower than this are never measured.
const MinStackDepth = deepFloor

// stackBand is the depths the prediction trusts: up to safe nothing throws, past certain everything does.
func (c Config) stackBand() (safe, certain int) {
	if c.StackDepth > 0 {
		return c.StackDepth, c.StackDepth
	}
	return SafeStackDepth, CertainStackDepth
}

// CrashStage is where the replay function throws.
type CrashStage uint8

// The stages.
const (
	// StageQuarantine: serializing the quarantine copy of the refused events — nothing is written.
	StageQuarantine CrashStage = iota + 1
	// StagePublish: serializing a republished event — the quarantine copy (if any) was written first, nothing is
	// published, the original stays.
	StagePublish
)

// depthsOf says how deep the replay serializes a well-formed payload whose events it judges as js says (aligned
// with p.Events): the deepest quarantined and republished values, and the deepest of events whose fate needs the
// handler register (the deeper of their two depths, and the shallower).
type depthsOf struct {
	quarantine, publish      int
	unknownMax, unknownFloor int
}

func measure(p *Payload, js []Judgement) depthsOf {
	var d depthsOf
	for i, e := range p.Deep {
		if i >= len(js) {
			break
		}
		switch j := js[i]; {
		case j.Replayable():
			d.publish = max(d.publish, e.Envelope)
		case !j.Known():
			d.unknownMax = max(d.unknownMax, e.Envelope, e.Full)
			d.unknownFloor = max(d.unknownFloor, min(e.Envelope, e.Full))
		default:
			d.quarantine = max(d.quarantine, e.Full)
		}
	}
	return d
}

// crashOf decides whether the replay function throws on a well-formed payload judged as js: the crash (nil when
// it certainly does not), and the depth when it may, depending on the runtime (0 when not).
func (c Config) crashOf(p *Payload, js []Judgement) (crash *Crash, may int) {
	if p.Malformed() || p.Deep == nil {
		return nil, 0 // a malformed payload is copied as raw bytes; a shallow one is never near a limit
	}
	safe, certain := c.stackBand()
	d := measure(p, js)
	switch {
	case d.quarantine > certain:
		return &Crash{Depth: d.quarantine, Stage: StageQuarantine}, 0
	case d.publish > certain:
		return &Crash{Depth: d.publish, Stage: StagePublish}, 0
	case d.unknownFloor > certain:
		return &Crash{Depth: d.unknownFloor, Stage: StageQuarantine}, 0
	}
	if deepest := max(d.quarantine, d.publish, d.unknownMax); deepest > safe {
		return nil, deepest
	}
	return nil, 0
}
