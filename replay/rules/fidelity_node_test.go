package rules_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay/rules"
)

// estateJS is the estate's replay function reduced to what decides its bytes, run by node as the reference:
// Buffer.toString → JSON.parse → the schema → the partition by the judgement's bars (docs/estate.md) → JSON.stringify of the
// quarantine copy first, then of every republished body (chunked on Buffer.byteLength) and of each request's
// array as the publisher sends it. It also computes the copy a restore writes (counts stripped the same way).
// Each input line is "<cap> <base64 body>"; each output line is one JSON object: m (malformed), c (where
// JSON.stringify overflowed the stack: "", "quarantine" or "publish"), r (republished bodies, base64), k
// (requests: first, last, events, bytes), q (quarantine copy, base64, or null), s (restored copy, base64, or null
// when no id carries a count). With "limit" as its only argument it prints the deepest value its JSON.stringify
// serializes from where handle calls it.
const estateJS = `
const fs = require('fs');
const REGISTER = JSON.parse(process.argv[4]);
const SEP = '|';
const MAX_EVENT_GRID_PUBLISH_BYTES = 512 * 1024;
const MAX_EVENT_GRID_PUBLISH_EVENT_COUNT = 5000;
const b64 = s => Buffer.from(s, 'utf8').toString('base64');
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function parseReplayId(id) {
  const m = /^(.+)\|(\d+)$/.exec(id);
  return m ? { original: m[1], attempt: Number(m[2]) } : { original: id, attempt: 0 };
}

function validate(p) {
  if (!Array.isArray(p)) return false;
  for (const e of p) {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
    for (const k of ['id', 'subject', 'eventType', 'dataVersion']) if (!own(e, k) || typeof e[k] !== 'string') return false;
    if (!own(e, 'data')) return false;
  }
  return true;
}

// {...raw, id} without a top-level own "__proto__" key (nested ones are left alone).
function copyWithId(raw, id) {
  const { ['__proto__']: _dropped, ...rest } = raw;
  return { ...rest, id };
}

function handle(cap, buf) {
  const text = buf.toString('utf8');
  let payload;
  try {
    payload = JSON.parse(text);
  } catch (e) {
    return { m: true, c: '', r: [], k: [], q: buf.toString('base64'), s: null };
  }
  if (!validate(payload)) return { m: true, c: '', r: [], k: [], q: buf.toString('base64'), s: null };
  const envelopes = [], refused = [];
  for (const raw of payload) {
    const { original, attempt } = parseReplayId(raw.id);
    const replayable = attempt < cap && own(REGISTER, raw.eventType) && REGISTER[raw.eventType] === true;
    if (!replayable) { refused.push(copyWithId(raw, original)); continue; }
    envelopes.push({ data: raw.data, dataVersion: raw.dataVersion, eventType: raw.eventType, id: original + SEP + (attempt + 1), subject: raw.subject });
  }
  let q = null;
  try {
    q = refused.length ? b64(JSON.stringify(refused)) : null; // the quarantine copy precedes the republish
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return { m: false, c: 'quarantine', r: [], k: [], q: null, s: null };
  }
  let republish, requests;
  try {
    // Every JSON.stringify here is called from handle itself, as limit() measures: no closure in between.
    republish = [];
    for (const e of envelopes) republish.push(JSON.stringify(e));
    requests = [];
    let cur = null;
    for (let i = 0; i < republish.length; i++) {
      const n = Buffer.byteLength(republish[i], 'utf8') + 1;
      if (cur && (cur[2] + 1 > MAX_EVENT_GRID_PUBLISH_EVENT_COUNT || cur[3] + n > MAX_EVENT_GRID_PUBLISH_BYTES)) { requests.push(cur); cur = null; }
      if (!cur) cur = [i, i, 0, 1];
      cur[1] = i; cur[2]++; cur[3] += n;
    }
    if (cur) requests.push(cur);
    for (const [first, last] of requests) JSON.stringify(envelopes.slice(first, last + 1)); // the publisher's request body
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return { m: false, c: 'publish', r: [], k: [], q, s: null };
  }
  let s = null, sc = false;
  try {
    const stripped = payload.some(e => parseReplayId(e.id).original !== e.id);
    s = stripped ? b64(JSON.stringify(payload.map(e => copyWithId(e, parseReplayId(e.id).original)))) : null;
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    sc = true; // too deep for node to write: deadletter writes the restored copy itself, with no stack limit
  }
  return { m: false, c: '', r: republish.map(b64), k: requests, q, s, sc };
}

// limit finds the deepest value JSON.stringify serializes when called one function below the top, as handle's
// calls are.
function limit() {
  const nest = n => { let v = null; for (let i = 0; i < n; i++) v = [v]; return v; };
  let lo = 1, hi = 1 << 16;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try { JSON.stringify(nest(mid)); lo = mid; } catch (e) { hi = mid - 1; }
  }
  return lo;
}
if (process.argv[2] === 'limit') { console.log(limit()); process.exit(0); }

const out = fs.openSync(process.argv[3], 'w');
for (const line of fs.readFileSync(process.argv[2], 'latin1').split('\n')) {
  if (!line) continue;
  const sp = line.indexOf(' ');
  fs.writeSync(out, JSON.stringify(handle(Number(line.slice(0, sp)), Buffer.from(line.slice(sp + 1), 'base64'))) + '\n');
}
fs.closeSync(out);
`

type nodeAnswer struct {
	M    bool
	SC   bool // node could not write the restored copy (too deep): nothing to compare
	C    string
	R    []string
	K    [][4]int
	Q, S *string
}

// nodeStackDepth is the deepest value the reference's JSON.stringify serializes, measured in the same node and
// from the same depth as its calls: the prediction is checked with --node-stack-depth set to it.
func nodeStackDepth(t *testing.T) int {
	t.Helper()
	node := nodePath(t)
	script := filepath.Join(t.TempDir(), "estate.js")
	if err := os.WriteFile(script, []byte(estateJS), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script, "limit", "x", "{}").Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n < 1000 {
		t.Fatalf("node's stack depth %q: %v", out, err)
	}
	return n
}

// nodePath finds node, the reference: a failure in CI, a skip elsewhere.
func nodePath(t *testing.T) string { return testkit.Node(t) }

// runEstateJS runs every payload through one node process under the given caps.
func runEstateJS(t *testing.T, reg rules.Register, caps []int, bodies [][]byte) []nodeAnswer {
	t.Helper()
	var req bytes.Buffer
	for i, b := range bodies {
		fmt.Fprintf(&req, "%d %s\n", caps[i], base64.StdEncoding.EncodeToString(b))
	}
	regJSON, _ := json.Marshal(reg)
	var answers []nodeAnswer
	for _, line := range testkit.RunNode(t, estateJS, req.Bytes(), string(regJSON)) {
		var a nodeAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("node answer: %v", err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(bodies) {
		t.Fatalf("node answered %d of %d", len(answers), len(bodies))
	}
	return answers
}

// payloadGen writes dead-letter payloads as text, to reach what a JSON encoder never writes: number spellings,
// escapes, lone surrogates, raw invalid UTF-8, duplicate keys, index keys and __proto__.
type payloadGen struct{ r *rand.Rand }

func (g *payloadGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *payloadGen) ws() string {
	if g.r.Intn(5) == 0 {
		return g.pick(" ", "\n", "\t", "\r\n  ", "  ")
	}
	return ""
}

func (g *payloadGen) number() string {
	switch g.r.Intn(4) {
	case 0:
		return strconv.Itoa(g.r.Intn(2000) - 1000)
	case 1:
		return strconv.FormatFloat(g.r.NormFloat64()*math10(g.r.Intn(40)-20), g.pick("e", "E", "f", "g")[0], -1, 64)
	}
	return g.pick("0", "-0", "1.0", "1E2", "1e+2", "1E-2", "1e21", "1e20", "1e-7", "1e-6", "1e400", "-1e400", "123456789012345678901",
		"9007199254740993", "0.1", "-12.50", "5e-324", "2e-324", "1.7976931348623157e308", "4294967295", "0.000001", "100", "-0.0", "0e10")
}

func math10(e int) float64 {
	f := 1.0
	for ; e > 0; e-- {
		f *= 10
	}
	for ; e < 0; e++ {
		f /= 10
	}
	return f
}

// pieces of string contents, raw JSON text: escapes, raw UTF-8, invalid UTF-8 and lone surrogates.
var strPieces = []string{"abc", "x", "é", `\u00e9`, `\/`, `\ud800`, `\udc00`, `\ud83d\ude00`, `\uD83D\uDE00`, `\ud83dx`, "\xff", "\xe2\x82",
	"\xf0\x9f\x98", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", `\n`, `\u001f`, `\u2028`, "\u2028", `\"`, `\\`, `\t`, "😀", `\u0000`,
	"\x7f", " ", `\b\f\r`, `\u007c`, "|", "名前"}

func (g *payloadGen) contents(max int) string {
	var b strings.Builder
	for n := g.r.Intn(max + 1); n > 0; n-- {
		b.WriteString(strPieces[g.r.Intn(len(strPieces))])
	}
	return b.String()
}

func (g *payloadGen) str() string { return `"` + g.contents(5) + `"` }

func (g *payloadGen) key() string {
	return `"` + g.pick("a", "b", "k", "0", "1", "10", "01", "2", "4294967294", "4294967295", "-1", "__proto__", "é", `\u0061`, "data", "id", "x y", g.contents(2)) + `"`
}

func (g *payloadGen) value(depth int) string {
	if depth <= 0 || g.r.Intn(3) == 0 {
		switch g.r.Intn(6) {
		case 0, 1:
			return g.number()
		case 2, 3:
			return g.str()
		case 4:
			return g.pick("true", "false")
		}
		return "null"
	}
	n := g.r.Intn(5)
	parts := make([]string, n)
	if g.r.Intn(2) == 0 {
		for i := range parts {
			parts[i] = g.ws() + g.value(depth-1) + g.ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for i := range parts {
		parts[i] = g.ws() + g.key() + g.ws() + ":" + g.ws() + g.value(depth-1)
	}
	return "{" + strings.Join(parts, ",") + g.ws() + "}"
}

func (g *payloadGen) id() string {
	base := g.pick("evt", "e-42", "a|b", "x", "", `\ud800`, "\xff", `\u00e9`, "名前") + g.contents(2)
	if g.r.Intn(10) == 0 {
		base += g.pick(`\n`, `\r`, `\u2028`, "\u2029")
	}
	return `"` + base + g.pick("", "", "|0", "|1", "|1", "|2", "|3", "|007", "|01", "|99999999999999999999999", "|x", "|", "|1.5",
		`\u007c1`, "|1|1", "|9007199254740993", "|123456789012345678", "|"+strings.Repeat("9", 400)) + `"`
}

// event writes one element. broken names a way to break the schema for it, or "".
func (g *payloadGen) event(broken string) string {
	type member struct{ k, v string }
	ms := []member{
		{`"id"`, g.id()},
		{`"subject"`, g.pick(`"/s"`, g.str())},
		{`"eventType"`, `"` + g.pick("Push", "Push", "Push", "Webhook", "Microsoft.Storage.BlobCreated", "constructor", `Pu\u0073h`, "push", "toString") + `"`},
		{`"dataVersion"`, g.pick(`"1"`, `"1.0"`, g.str())},
		{`"data"`, g.value(g.r.Intn(5))},
	}
	if g.r.Intn(2) == 0 {
		ms = append(ms, member{`"deadLetterReason"`, `"MaxDeliveryAttemptsExceeded"`}, member{`"deliveryAttempts"`, g.number()},
			member{`"lastHttpStatusCode"`, g.pick("503", "4.04e2", `"500"`)}, member{`"publishTime"`, `"2026-01-01T00:00:00.0000000Z"`})
	}
	for n := g.r.Intn(4); n > 0; n-- {
		ms = append(ms, member{g.key(), g.value(2)})
	}
	if g.r.Intn(6) == 0 {
		ms = append(ms, member{`"__proto__"`, g.pick(`{"id":"proto"}`, "1", "null", `{"__proto__":{"x":1}}`)})
	}
	if g.r.Intn(6) == 0 { // a duplicate of a schema field: the last one wins
		ms = append(ms, member{g.pick(`"id"`, `"data"`, `"subject"`, `"eventType"`), g.pick(g.id(), g.value(2), g.str(), `"Push"`, `"Webhook"`)})
	}
	switch broken {
	case "no data":
		ms[4].k = g.pick(`"Data"`, `"dat\u0061x"`)
	case "number id":
		ms[0].v = g.number()
	case "null subject":
		ms[1].v = "null"
	}
	g.r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = g.ws() + m.k + g.ws() + ":" + g.ws() + m.v
	}
	return "{" + strings.Join(parts, ",") + g.ws() + "}"
}

func (g *payloadGen) payload() []byte {
	n := 1 + g.r.Intn(5)
	evs := make([]string, n)
	broken := ""
	if g.r.Intn(10) == 0 {
		broken = g.pick("no data", "number id", "null subject", "not an object", "top-level object", "trailing comma", "bom", "truncated")
	}
	for i := range evs {
		b := ""
		if i == n-1 {
			b = broken
		}
		evs[i] = g.ws() + g.event(b) + g.ws()
	}
	switch broken {
	case "not an object":
		evs[n-1] = g.pick("1", `"s"`, "[]", "null")
	case "top-level object":
		return []byte(evs[0])
	}
	body := g.ws() + "[" + strings.Join(evs, ",") + "]" + g.ws()
	switch broken {
	case "trailing comma":
		body = strings.TrimRight(body, " \n\t\r]") + ",]"
	case "bom":
		body = "\xef\xbb\xbf" + body
	case "truncated":
		body = body[:g.r.Intn(len(body))]
	}
	return []byte(body)
}

// big is a payload of n events whose data is a string of about size bytes with a few é written as \u00e9, so
// that chunking depends on the exact serialized length.
func (g *payloadGen) big(n, size int) []byte {
	evs := make([]string, n)
	for i := range evs {
		s := strings.Repeat("y", size+g.r.Intn(size/4+1))
		for j := 0; j < 5; j++ {
			k := g.r.Intn(len(s))
			s = s[:k] + `\u00e9` + s[k:]
		}
		evs[i] = `{"id":"big-` + strconv.Itoa(i) + g.pick("", "|1", "|2") + `","subject":"/s","eventType":"` + g.pick("Push", "Push", "Webhook") +
			`","dataVersion":"1","data":{"blob":"` + s + `","n":1.0}}`
	}
	return []byte("[" + strings.Join(evs, ",") + "]")
}

// handcrafted are the named cases of fidelity_test.go and the estate's examples (docs/estate.md), so that their hand-written
// expectations are Node's too.
func handcrafted() [][]byte {
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	for _, d := range []string{`1.0`, `1E2`, `-0`, `1e21`, `1e20`, `1e400`, `123456789012345678901`, `[0.0000001,1e-7,0.000001,-1.50e-3]`,
		`"caf\u00e9"`, `"a\/b"`, `"x\uD800y\uDFFF"`, `"\ud83d\ude00"`, "\"a\xe2\x82b\xffc\xed\xa0\x80d\xf0\x9f\x98\"", `"\u0001\u001f\b\t\n\f\r\"\\\u007f\u2028"`,
		`{"a":1,"b":2,"a":3}`, `{"a":1,"\u0061":2}`, `{"b":1,"10":2,"0":3,"01":4,"-1":5,"4294967295":6,"4294967294":7}`, `{"__proto__":{"x":1},"y":2}`} {
		add("[" + event("a", "Push", d, "") + "]")
	}
	for _, id := range []string{`a`, `a|1`, `a|001`, `lone-\ud800|1`, `b\u007c1`, `x\n|1`, `a|2`, `\udc00`} {
		add("[" + event(id, "Push", "1", "") + "," + event(id, "Webhook", "1", `,"__proto__":{"evil":true},"0":0`) + "]")
	}
	add(`[{"id":"x|9","subject":"/s","eventType":"Push","dataVersion":"1","data":null,"id":"x|1"}]`)
	add(`[{"id":"d|1","7":"seven","subject":"/s","eventType":"Nope","dataVersion":"1","data":null,"subject":"/t","0":"zero","id":"d|5"}]`)
	add("[{ \"id\" : \"w\\u00e9|3\" ,\n\t\"subject\":\"\\/s\", \"eventType\":\"Webhook\",\"dataVersion\":\"1\",\"data\": [ 1E2 , -0 ] }]")
	add(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1"}]`)
	add(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","x":{"data":1}}]`)
	add(nested(100000, ""))
	add("\xef\xbb\xbf[]")
	add(`[]`)
	// The 512 KiB boundary, decided by \u00e9 and 1.0 being counted as JSON.stringify writes them.
	for _, extra := range []int{-1, 0, 1} {
		smallOut := len(`{"data":"é","dataVersion":"1","eventType":"Push","id":"b|1","subject":"/s"}`)
		pad := rules.MaxPublishBytes - 1 - (smallOut + 1) - 1 - len(`{"data":"","dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`) + extra
		add("[" + event("a", "Push", `"`+strings.Repeat("x", pad)+`"`, "") + "," + event("b", "Push", `"\u00e9"`, "") + "]")
		smallOut = len(`{"data":1,"dataVersion":"1","eventType":"Push","id":"b|1","subject":"/s"}`)
		pad = rules.MaxPublishBytes - 1 - (smallOut + 1) - 1 - len(`{"data":"","dataVersion":"1","eventType":"Push","id":"a|1","subject":"/s"}`) + extra
		add("[" + event("a", "Push", `"`+strings.Repeat("x", pad)+`"`, "") + "," + event("b", "Push", `1.0`, "") + "]")
	}
	add(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":` + nested(6000, "") + `,"data":1}]`)
	return out
}

// deepCases are payloads on both sides of node's stack depth L, in every place a value can nest: the data of a
// republished event (it overflows the publish), a field the schema does not keep (free when republished, an
// overflow when quarantined), the data of a refused event, a shallow refused event beside a deep republished one
// (the copy is written, then the publish overflows), and far past it. They keep two levels from L: V8's stack
// use per level differs by a level or so with what the arrays hold (an array of two objects overflows one level
// sooner than an array of one), which is why the default prediction is a band, not a line.
func deepCases(l int) [][]byte {
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	for _, d := range []int{l - 4, l - 2, l + 2, l + 4} {
		add("[" + event("a", "Push", nested(d-2, "1"), "") + "]")                                       // envelope d deep
		add("[" + event("a", "Push", "1", `,"extra":`+nested(d-2, "")) + "]")                           // free: republished
		add("[" + event("a|5", "Push", "1", `,"extra":`+nested(d-2, "")) + "]")                         // element d deep, refused
		add("[" + event("w", "Webhook", `{"x":`+nested(d-3, "")+`}`, "") + "]")                         // refused data, element d deep
		add("[" + event("a|5", "Push", "1", "") + "," + event("b", "Push", nested(d-2, "1"), "") + "]") // copy, then the publish
	}
	add("[" + event("a", "Push", "1", `,"extra":`+nested(10001, "")) + "]")
	add("[" + event("a", "Push", nested(l+500, "1"), "") + "]")
	return out
}

// TestFidelityAgainstNode runs a few hundred generated payloads, and the named cases, through the estate's
// function in node and through Plan and PlanRestore, and compares every byte they would write or publish.
func TestFidelityAgainstNode(t *testing.T) {
	t.Parallel()
	g := &payloadGen{r: rand.New(rand.NewSource(20261130))}
	type tc struct {
		kind string
		body []byte
	}
	var cases []tc
	for _, b := range handcrafted() {
		cases = append(cases, tc{"handcrafted", b})
	}
	for i := 0; i < 400; i++ {
		cases = append(cases, tc{"generated", g.payload()})
	}
	for _, nb := range [][2]int{{6, 100 << 10}, {12, 60 << 10}, {3, 300 << 10}, {2, 600 << 10}} {
		cases = append(cases, tc{"large", g.big(nb[0], nb[1])})
	}
	depth := nodeStackDepth(t)
	for _, b := range deepCases(depth) {
		cases = append(cases, tc{"deep", b})
	}
	tiny := make([]string, 12001)
	for i := range tiny {
		tiny[i] = `{"id":"t` + strconv.Itoa(i) + `","subject":"","eventType":"Push","dataVersion":"","data":null}`
	}
	cases = append(cases, tc{"large", []byte("[" + strings.Join(tiny, ",") + "]")})

	reg := rulestest.Register()
	// Every payload under the estate's cap of 2, and under a cap so high that huge counts are republished (their
	// attempt + 1 then prints as JavaScript prints a double).
	caps := []int{rules.DefaultConfig().MaxReplays, 1 << 62}
	var bodies [][]byte
	var capOf []int
	for _, c := range cases {
		for _, cp := range caps {
			bodies = append(bodies, c.body)
			capOf = append(capOf, cp)
		}
	}
	start := time.Now()
	answers := runEstateJS(t, reg, capOf, bodies)
	t.Logf("node answered %d runs in %s", len(answers), time.Since(start))

	stats := map[string]int{}
	now := time.Date(2026, 11, 30, 3, 4, 5, 0, time.UTC)
	for i, body := range bodies {
		a := answers[i]
		kind := cases[i/len(caps)].kind
		cfg := rulestest.ConfigWith(reg)
		cfg.MaxReplays = capOf[i]
		cfg.StackDepth = depth // node's own, measured where it serializes
		p := rules.ParsePayload(body)
		pv := cfg.Plan(fidelityName, body, p)
		where := fmt.Sprintf("%s case %d (cap %d) %.200q", kind, i/len(caps), capOf[i], body)
		switch {
		case p.Malformed() != a.M:
			t.Errorf("%s: malformed %v (%v), node %v", where, p.Malformed(), p.Err, a.M)
			continue
		case crashStage(pv.Crash) != a.C:
			t.Errorf("%s: crash %+v, node %q", where, pv.Crash, a.C)
			continue
		}
		stats[kind]++
		switch {
		case a.M:
			stats["malformed"]++
		case a.C == "quarantine":
			stats["crash before writing"]++
			continue
		case a.C == "publish":
			stats["crash after the quarantine copy"]++
		}
		if len(pv.Republish) != len(a.R) {
			t.Errorf("%s: %d republished, node %d", where, len(pv.Republish), len(a.R))
			continue
		}
		for j, r := range pv.Republish {
			if want := decode64(t, a.R[j]); !bytes.Equal(r.Body, want) {
				t.Errorf("%s: republished %d\n go   %q\n node %q", where, j, r.Body, want)
			}
		}
		stats["republished events"] += len(a.R)
		if len(pv.PublishRequests) != len(a.K) {
			t.Errorf("%s: requests %+v, node %v", where, pv.PublishRequests, a.K)
		} else {
			for j, r := range pv.PublishRequests {
				if [4]int{r.First, r.Last, r.Events, r.Bytes} != a.K[j] {
					t.Errorf("%s: request %d %+v, node %v", where, j, r, a.K[j])
				}
			}
		}
		stats["publish requests"] += len(a.K)
		switch {
		case a.Q == nil && pv.QuarantineBody != nil:
			t.Errorf("%s: quarantine copy %q, node writes none", where, pv.QuarantineBody)
		case a.Q != nil && !bytes.Equal(pv.QuarantineBody, decode64(t, *a.Q)):
			t.Errorf("%s: quarantine copy\n go   %q\n node %q", where, pv.QuarantineBody, decode64(t, *a.Q))
		case a.Q != nil:
			stats["quarantine copies"]++
		}
		if a.M || a.C != "" || a.SC {
			continue
		}
		rp := cfg.PlanRestore("quarantine/"+fidelityName, body, p, now)
		want := body
		if a.S != nil {
			want = decode64(t, *a.S)
			stats["restores stripped"]++
		}
		if !bytes.Equal(rp.Body, want) {
			t.Errorf("%s: restored copy\n go   %q\n node %q", where, rp.Body, want)
		}
	}
	t.Logf("compared with node: %d runs (%d payloads × %d caps): %v", len(bodies), len(cases), len(caps), stats)
}

// crashStage is a crash as the reference says it: where JSON.stringify overflowed.
func crashStage(c *rules.Crash) string {
	switch {
	case c == nil:
		return ""
	case c.Stage == rules.StageQuarantine:
		return "quarantine"
	}
	return "publish"
}

func decode64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The default prediction is a band, [SafeStackDepth, CertainStackDepth]: the depth this machine's node
// serializes — measured the way the reference harness measures it — lies inside it, or the band is not honest.
func TestStackBandHoldsThisNode(t *testing.T) {
	t.Parallel()
	l := nodeStackDepth(t)
	if l < rules.SafeStackDepth || l > rules.CertainStackDepth {
		t.Fatalf("node serializes values %d deep here, outside the band [%d, %d] the prediction assumes", l, rules.SafeStackDepth, rules.CertainStackDepth)
	}
	v, _ := exec.Command("node", "--version").Output()
	t.Logf("%s serializes %d levels from a function one below the top", strings.TrimSpace(string(v)), l)
}
