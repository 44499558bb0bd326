// Package scenario writes realistic dead-letter incidents: the demo, seeds for rehearsals and tests, and the
// benchmark's bulk blobs. It is data, not rules: every name and verdict it produces is judged by package replay.
package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// IncidentRegister is the handler register the incident scenario implies: the estate's functions and whether
// each is idempotent. ProcessWebhook is not (createMessage mints a fresh rowKey per call).
var IncidentRegister = rules.Register{
	"ProcessPushNotification": true,
	"ProcessFriendRequest":    true,
	"ProcessThreadReply":      true,
	"ProcessScheduledMessage": true,
	"ProcessBlobDeletion":     true,
	"ProcessWebhook":          false,
}

// SeedOptions shape a seeded incident.
type SeedOptions struct {
	// Scenario is "incident" (the only one so far).
	Scenario string
	// Count is how many bulk root blobs to add beside the fixed cases.
	Count int
	// Seed makes the names and payloads reproducible.
	Seed int64
	// Config supplies the TTL, retention and separator the ages and ids are built against.
	Config rules.Config
}

// SeedReport says what was written.
type SeedReport struct {
	Blobs int
	// Skipped counts blobs whose name was already taken: a seed never overwrites (If-None-Match "*").
	Skipped    int
	Backdated  bool
	ByPane     map[rules.Pane]int
	Register   rules.Register
	ServiceNow time.Time
}

type seedEvent struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic,omitempty"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       string          `json:"eventTime"`
	Data            json.RawMessage `json:"data"` // the estate's schema requires the key
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
	Diagnostics
}

// Diagnostics are what Event Grid adds to an event it dead-letters (the seed's events and the twin's alike).
type Diagnostics struct {
	DeadLetterReason        string `json:"deadLetterReason"`
	DeliveryAttempts        int    `json:"deliveryAttempts"`
	LastDeliveryOutcome     string `json:"lastDeliveryOutcome"`
	LastHTTPStatusCode      int    `json:"lastHttpStatusCode,omitempty"`
	PublishTime             string `json:"publishTime"`
	LastDeliveryAttemptTime string `json:"lastDeliveryAttemptTime"`
}

type failure struct {
	reason, outcome string
	status          int
}

// What a Function App that is down, throttled or broken looks like from Event Grid.
var failures = []failure{
	{"MaxDeliveryAttemptsExceeded", "Busy", 503},
	{"MaxDeliveryAttemptsExceeded", "Forbidden", 403},
	{"TimeToLiveExceeded", "TimedOut", 408},
	{"TimeToLiveExceeded", "SocketError", 0},
	{"UndeliverableDueToHttpBadRequest", "BadRequest", 400},
	{"UndeliverableDueToProbationCausedByClientError", "Probation", 0},
	{"MaxDeliveryAttemptsExceeded", "NotFound", 404},
}

type sub struct{ name, eventType, topic string }

var subscriptions = []sub{
	{"push-notifications", "ProcessPushNotification", "app"},
	{"friend-requests", "ProcessFriendRequest", "app"},
	{"thread-replies", "ProcessThreadReply", "app"},
	{"webhooks", "ProcessWebhook", "app"},
	{"blob-deletions", "ProcessBlobDeletion", "app"},
	{"storage-ledger", "Microsoft.Storage.BlobCreated", "system"},
}

type seeder struct {
	ctx  context.Context
	c    store.Container
	cfg  rules.Config
	rng  *rand.Rand
	now  time.Time
	rep  *SeedReport
	back store.Provisioner // nil once the container says it cannot backdate
}

func (s *seeder) guid() string {
	b := make([]byte, 16)
	s.rng.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *seeder) event(sb sub, attempt int, at time.Time, f failure) seedEvent {
	id := s.guid()
	if attempt > 0 {
		id = rules.FormatID(id, rules.Attempt(attempt), s.cfg.Separator)
	}
	ev := seedEvent{ID: id, Subject: "/" + sb.name + "/" + s.guid()[:8], EventType: sb.eventType, DataVersion: "1.0", MetadataVersion: "1",
		EventTime: at.Add(-62 * time.Minute).Format(time.RFC3339Nano), Diagnostics: Diagnostics{DeadLetterReason: f.reason, DeliveryAttempts: 7 + s.rng.Intn(4),
			LastDeliveryOutcome: f.outcome, LastHTTPStatusCode: f.status, PublishTime: at.Add(-61 * time.Minute).Format(time.RFC3339Nano),
			LastDeliveryAttemptTime: at.Add(-time.Duration(s.rng.Intn(50)) * time.Second).Format(time.RFC3339Nano)}}
	switch sb.topic {
	case "system":
		ev.Topic = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/estate/providers/Microsoft.Storage/storageAccounts/estateassets"
		ev.Subject = "/blobServices/default/containers/message-assets/blobs/" + s.guid()[:8] + ".jpg"
		ev.Data = json.RawMessage(fmt.Sprintf(`{"api":"PutBlob","contentType":"image/jpeg","contentLength":%d,"blobType":"BlockBlob","url":"https://estateassets.blob.core.windows.net/message-assets/%s.jpg"}`, 20000+s.rng.Intn(900000), s.guid()[:8]))
	default:
		ev.Data = json.RawMessage(fmt.Sprintf(`{"userId":"u-%s","roomId":"r-%s","messageId":"%s"}`, s.guid()[:6], s.guid()[:6], s.guid()))
	}
	return ev
}

func (s *seeder) batch(sb sub, n int, at time.Time, attempt func(i int) int) []seedEvent {
	f := failures[s.rng.Intn(len(failures))]
	out := make([]seedEvent, n)
	for i := range out {
		out[i] = s.event(sb, attempt(i), at, f)
	}
	return out
}

func zero(int) int { return 0 }

// put writes a blob and backdates it to age.
func (s *seeder) put(name string, body []byte, age time.Duration) error {
	_, err := s.c.Write(s.ctx, name, body, store.WriteOptions{ContentType: "application/json", IfNoneMatchAny: true})
	if errors.Is(err, store.ErrAlreadyExists) {
		s.rep.Skipped++
		return nil
	}
	if err != nil {
		return err
	}
	if s.back != nil && age > 0 {
		err := s.back.Backdate(s.ctx, name, s.now.Add(-age))
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			s.back, s.rep.Backdated = nil, false
		case err != nil:
			return err
		}
	}
	pane := s.cfg.Classify(name, age)
	if s.back == nil && rules.IsRoot(name) {
		pane = rules.PaneLive
	}
	s.rep.ByPane[pane]++
	s.rep.Blobs++
	return nil
}

func (s *seeder) putEvents(name string, evs any, age time.Duration) error {
	b, err := json.Marshal(evs)
	if err != nil {
		return err
	}
	return s.put(name, b, age)
}

func (s *seeder) name(sb sub, age time.Duration) string {
	return rules.DeadLetterName(sb.name, s.now.Add(-age), s.guid())
}

// Seed writes a realistic incident into c: every pane, every verdict, malformed payloads, blobs close to
// lifecycle deletion and a stalled live blob. On a directory the blobs are backdated; on Azure they are new and
// root blobs become stranded once they pass the TTL.
func Seed(ctx context.Context, c store.Container, o SeedOptions) (SeedReport, error) {
	if o.Scenario != "" && o.Scenario != "incident" {
		return SeedReport{}, fmt.Errorf("unknown scenario %q (have: incident)", o.Scenario)
	}
	now, err := c.Now(ctx)
	if err != nil {
		return SeedReport{}, err
	}
	rep := SeedReport{ByPane: map[rules.Pane]int{}, Register: IncidentRegister, ServiceNow: now}
	s := &seeder{ctx: ctx, c: c, cfg: o.Config, rng: rand.New(rand.NewSource(o.Seed)), now: now, rep: &rep}
	if p, ok := c.(store.Provisioner); ok {
		s.back, rep.Backdated = p, true
	}
	for _, f := range s.incident() {
		if err := f(); err != nil {
			return rep, err
		}
	}
	// The outcomes that come from the replay function itself, drawn from a stream of their own so that every
	// blob above and below stays what it was for a given seed.
	x := *s
	x.rng = rand.New(rand.NewSource(o.Seed ^ 0x5eedcafe))
	if err := x.lingering(o.Config, s.at); err != nil {
		return rep, err
	}
	return rep, s.bulk(o.Count)
}

// at is the time an age ago, by the service's clock.
func (s *seeder) at(age time.Duration) time.Time { return s.now.Add(-age) }

// incident is the hand-written part of the scenario, one step per blob, in a fixed order so that a seed always
// gives the same container.
func (s *seeder) incident() []func() error {
	return append(append(s.stranded(), s.malformed()...), s.quarantined()...)
}

// stranded and live blobs at the root.
func (s *seeder) stranded() []func() error {
	h, at := time.Hour, s.at
	ttl, ret := s.cfg.TTL, s.cfg.Retention
	push, friends, replies, hooks, deletions, ledger := subscriptions[0], subscriptions[1], subscriptions[2], subscriptions[3], subscriptions[4], subscriptions[5]
	return []func() error{
		// Stranded: the Function App was stopped by the budget guard for longer than the delivery window.
		func() error { a := 3 * h; return s.putEvents(s.name(push, a), s.batch(push, 12, at(a), zero), a) },
		func() error {
			a := 5*h + 20*time.Minute
			evs := append(s.batch(replies, 3, at(a), func(i int) int { return i % 2 }), s.batch(replies, 2, at(a), func(int) int { return s.cfg.MaxReplays })...)
			evs = append(evs, s.batch(hooks, 2, at(a), zero)...)
			return s.putEvents(s.name(replies, a), evs, a)
		},
		func() error { a := 6 * h; return s.putEvents(s.name(ledger, a), s.batch(ledger, 4, at(a), zero), a) },
		func() error {
			a := 26 * h
			return s.putEvents(s.name(deletions, a), s.batch(deletions, 48, at(a), zero), a)
		},
		// About to be lost: stranded for nearly the whole retention.
		func() error {
			a := ret - 36*h
			return s.putEvents(s.name(friends, a), s.batch(friends, 5, at(a), zero), a)
		},
		// Live: a trigger still has attempts left; one has sat past the grace (the replay is not consuming).
		func() error {
			a := 2 * time.Minute
			return s.putEvents(s.name(push, a), s.batch(push, 3, at(a), zero), a)
		},
		func() error {
			// Past the grace but under the TTL; when the TTL leaves no such window it is simply stranded.
			a := s.cfg.LiveGrace + 15*time.Minute
			if a >= ttl {
				a = ttl
			}
			return s.putEvents(s.name(friends, a), s.batch(friends, 2, at(a), zero), a)
		},
	}
}

// malformed blobs at the root: truncated JSON, not an array, a missing field, a CloudEvents delivery, and an id
// the estate can never count.
func (s *seeder) malformed() []func() error {
	h, at := time.Hour, s.at
	push, replies, hooks := subscriptions[0], subscriptions[2], subscriptions[3]
	return []func() error{
		func() error {
			a := 2 * h
			return s.put(s.name(push, a), []byte(`[{"id":"`+s.guid()+`","subject":"/push/1","eventType":"ProcessPushNotification","dataVers`), a)
		},
		func() error {
			a := 3 * h
			ev := s.event(hooks, 0, at(a), failures[0])
			b, _ := json.Marshal(ev)
			return s.put(s.name(hooks, a), b, a)
		},
		func() error {
			a := 4 * h
			evs := s.batch(replies, 3, at(a), zero)
			b, _ := json.Marshal(evs)
			var raw []map[string]any
			json.Unmarshal(b, &raw)
			delete(raw[1], "dataVersion")
			return s.putEvents(s.name(replies, a), raw, a)
		},
		func() error {
			a := 7 * h
			ce := []map[string]any{{"specversion": "1.0", "type": "ProcessThreadReply", "source": "/estate/app", "id": s.guid(), "time": at(a + 62*time.Minute).Format(time.RFC3339),
				"subject": "/thread-replies/42", "datacontenttype": "application/json", "data": map[string]string{"threadId": "t-42"},
				"deadletterreason": "MaxDeliveryAttemptsExceeded", "deliveryattempts": 10, "lastdeliveryoutcome": "Busy", "lasthttpstatuscode": 503,
				"publishtime": at(a + 61*time.Minute).Format(time.RFC3339), "lastdeliveryattempttime": at(a).Format(time.RFC3339)}}
			return s.putEvents(s.name(replies, a), ce, a)
		},
		// An id with a line terminator: the estate can never count it, so the cap never stops it.
		func() error {
			a := 9 * h
			evs := s.batch(push, 2, at(a), zero)
			evs[1].ID = s.guid()[:8] + "\n|1|1|1"
			return s.putEvents(s.name(push, a), evs, a)
		},
	}
}

// quarantined blobs: the cap (ids stripped, as the replay writes them), a non-idempotent handler, a system-topic
// event, a malformed payload's raw bytes, and one about to expire.
func (s *seeder) quarantined() []func() error {
	h, at, ret := time.Hour, s.at, s.cfg.Retention
	push, friends, replies, hooks, ledger := subscriptions[0], subscriptions[1], subscriptions[2], subscriptions[3], subscriptions[5]
	return []func() error{
		func() error {
			a := 30 * h
			evs := s.batch(push, 6, at(a), zero)
			return s.putEvents(rules.QuarantinePrefix+s.name(push, a), evs, a)
		},
		func() error {
			a := 20 * h
			return s.putEvents(rules.QuarantinePrefix+s.name(hooks, a), s.batch(hooks, 3, at(a), zero), a)
		},
		func() error {
			a := 50 * h
			return s.putEvents(rules.QuarantinePrefix+s.name(ledger, a), s.batch(ledger, 2, at(a), zero), a)
		},
		func() error {
			a := 12 * h
			evs := append(s.batch(friends, 2, at(a), zero), s.batch(hooks, 1, at(a), zero)...)
			return s.putEvents(rules.QuarantinePrefix+s.name(friends, a), evs, a)
		},
		func() error {
			a := 8 * h
			return s.put(rules.QuarantinePrefix+s.name(push, a), []byte(`{"error":"not an array"`), a)
		},
		func() error {
			a := ret - 20*h
			return s.putEvents(rules.QuarantinePrefix+s.name(replies, a), s.batch(replies, 4, at(a), zero), a)
		},
	}
}

// bulk writes the rest of the incident, across every subscription.
func (s *seeder) bulk(count int) error {
	h, ttl := time.Hour, s.cfg.TTL
	for i := 0; i < count; i++ {
		sb := subscriptions[s.rng.Intn(len(subscriptions)-1)]
		n := 1 + s.rng.Intn(50)
		var a time.Duration
		name := ""
		switch r := s.rng.Intn(100); {
		case r < 15:
			// A trickle of old failures from before the incident.
			a = ttl + time.Duration(s.rng.Int63n(int64(10*24*h)))
		case r < 55:
			// The incident: the Function App went down about a day ago and dead letters have piled up since,
			// faster as more subscriptions exhausted their retries (more of them recent than old).
			f := s.rng.Float64()
			a = ttl + time.Duration(f*f*float64(26*h))
		case r < 75:
			a = time.Duration(s.rng.Int63n(int64(s.cfg.LiveGrace)))
		default:
			a = time.Duration(s.rng.Int63n(int64(20 * 24 * h)))
			name = rules.ArchivedPrefix
		}
		name += s.name(sb, a)
		if err := s.putEvents(name, s.batch(sb, n, s.at(a), func(int) int { return s.rng.Intn(s.cfg.MaxReplays + 1) }), a); err != nil {
			return err
		}
	}
	return nil
}

// lingering writes the blobs the replay function crashed on or already handled:
//   - a crash: a thread reply whose data nests past what JSON.stringify can serialize (a reply chain serialized
//     parent by parent), stranded at the root — the function throws on it on every delivery and every drain;
//   - two handled blobs whose best-effort delete failed: one whose archived/ twin holds the same bytes (it was
//     republished), one whose quarantine/ twin holds every one of its events (all refused).
func (s *seeder) lingering(cfg rules.Config, at func(time.Duration) time.Time) error {
	h := time.Hour
	push, friends, replies := subscriptions[0], subscriptions[1], subscriptions[2]
	// The crash.
	a := 4*h + 10*time.Minute
	ev := s.event(replies, 1, at(a), failures[0])
	ev.Data = DeepReplies("t-"+s.guid()[:6], CrashDepth)
	b, err := json.Marshal([]seedEvent{ev})
	if err != nil {
		return err
	}
	if err := s.put(s.name(replies, a), b, a); err != nil {
		return err
	}
	// Republished and archived; the original lingers.
	a = 3*h + 40*time.Minute
	name := s.name(push, a)
	if b, err = json.Marshal(s.batch(push, 4, at(a), zero)); err != nil {
		return err
	}
	if err := s.put(name, b, a); err != nil {
		return err
	}
	if err := s.put(rules.ArchivedPrefix+name, b, a-2*time.Minute); err != nil {
		return err
	}
	// Every event at the cap, so every one refused: the quarantine copy is the whole record, written as the
	// estate writes it (counts stripped); the original lingers.
	a = 7*h + 5*time.Minute
	name = s.name(friends, a)
	if b, err = json.Marshal(s.batch(friends, 3, at(a), func(int) int { return cfg.MaxReplays })); err != nil {
		return err
	}
	if err := s.put(name, b, a); err != nil {
		return err
	}
	judge := cfg
	judge.Handlers = IncidentRegister
	pv := judge.Plan(name, b, rules.ParsePayload(b))
	if len(pv.Republish) != 0 || pv.QuarantineBody == nil {
		return fmt.Errorf("scenario: the handled-by-quarantine blob is not refused whole")
	}
	return s.put(pv.QuarantineName, pv.QuarantineBody, a-time.Minute)
}

// CrashDepth is how deep the crash case's data nests: past replay.MaxStringifyDepth and Node's real limit alike.
const CrashDepth = 5000

// DeepReplies is a thread reply's data with its chain of parents serialized inline, depth objects deep.
func DeepReplies(thread string, depth int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"threadId":"` + thread + `","reply":`)
	for i := 1; i < depth; i++ {
		fmt.Fprintf(&b, `{"replyId":"r-%d","parent":`, depth-i)
	}
	b.WriteString(`null`)
	b.WriteString(strings.Repeat("}", depth))
	return json.RawMessage(b.String())
}

// Bulk writes realistic dead-letter blobs for benchmarks: gen(i) is the i-th blob, with 1–5 events of a root
// subscription, its name dated at now minus a spread of ages. The same rng seed gives the same blobs.
type Bulk struct {
	s *seeder
}

// NewBulk makes a generator.
func NewBulk(seed int64, now time.Time, cfg rules.Config) *Bulk {
	return &Bulk{s: &seeder{cfg: cfg, rng: rand.New(rand.NewSource(seed)), now: now, rep: &SeedReport{ByPane: map[rules.Pane]int{}}}}
}

// Next returns the next blob's name and body (not safe for concurrent use).
func (b *Bulk) Next() (string, []byte) {
	sb := subscriptions[b.s.rng.Intn(len(subscriptions)-1)]
	age := time.Duration(b.s.rng.Int63n(int64(7 * 24 * time.Hour)))
	evs := b.s.batch(sb, 1+b.s.rng.Intn(5), b.s.now.Add(-age), func(int) int { return b.s.rng.Intn(b.s.cfg.MaxReplays + 1) })
	body, _ := json.Marshal(evs)
	return b.s.name(sb, age), body
}
