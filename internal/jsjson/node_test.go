package jsjson

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/deadletter/deadletter/internal/testkit"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// nodeScript evaluates every request line in one node process: "P <b64>" is JSON.parse of the bytes decoded as
// Buffer.toString does, then JSON.stringify; "N <hex>" is String() of a double given by its bits; "D <b64>" is
// Buffer.toString("utf8"). Answers are one line each, in order.
const nodeScript = `
const fs = require('fs');
const lines = fs.readFileSync(process.argv[2], 'latin1').split('\n');
const out = [];
for (const line of lines) {
  if (!line) continue;
  const kind = line[0], data = line.slice(2);
  if (kind === 'P') {
    let v;
    try {
      v = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
    } catch (e) {
      const m = /at position (\d+)/.exec(e.message);
      out.push('E ' + (m ? m[1] : /end of JSON input/.test(e.message) ? 'end' : '?') + ' ' + e.message.replace(/\s+/g, ' '));
      continue;
    }
    try {
      out.push('O ' + Buffer.from(JSON.stringify(v), 'utf8').toString('base64'));
    } catch (e) {
      out.push('X ' + e.message);
    }
  } else if (kind === 'N') {
    out.push('O ' + String(Buffer.from(data, 'hex').readDoubleBE(0)));
  } else if (kind === 'D') {
    out.push('O ' + Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'utf8').toString('base64'));
  }
}
fs.writeFileSync(process.argv[3], out.join('\n') + '\n');
`

// runNode sends requests to a single node process and returns its answers.
func runNode(t *testing.T, requests []string) []string {
	t.Helper()
	answers := testkit.RunNode(t, nodeScript, []byte(strings.Join(requests, "\n")+"\n"))
	if len(answers) != len(requests) {
		t.Fatalf("node answered %d of %d requests", len(answers), len(requests))
	}
	return answers
}

// utf16Offset converts a byte offset of the input, which always falls on a character boundary of the decoded
// text, into the UTF-16 index V8 puts in its messages.
func utf16Offset(b []byte, off int) int {
	n := 0
	for _, r := range DecodeUTF8(b[:off]) {
		n += utf16.RuneLen(r)
	}
	return n
}

func numberCases(r *rand.Rand) []float64 {
	fs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 0.3, 1e21, 1e-7, 1e-6, 1e20, 9.999999999999999e20,
		999999999999999900000, 1e-7 * (1 - 1e-16), 1.5e-7, -1.2345e100, 5e-324, -5e-324, 1e-323, math.MaxFloat64,
		-math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 2.225073858507201e-308, 1 << 53,
		1<<53 + 2, 1<<53 - 1, -(1 << 53), 1 << 63, 1 << 64, 12345678901234567890, 123456789012345678901, 1e23,
		5e-7, 4.35e-6, 1.0000000000000002, 0.9999999999999999, 123e-20, 1e308, math.Inf(1), math.Inf(-1), math.NaN(),
		4294967295, 4294967296, 0.000001, 1.7976931348623157e308, 3.14159, 1e-100, 1e100, 2e-7, 9.5e-7, 1.25e21}
	for e := -330; e <= 310; e++ { // every power of ten and its neighbours, across both notation boundaries
		p, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		fs = append(fs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	for i := 0; i < 3000; i++ {
		switch i % 4 {
		case 0, 1:
			fs = append(fs, math.Float64frombits(r.Uint64()))
		case 2: // numbers of ordinary magnitude, where the notation changes
			fs = append(fs, r.NormFloat64()*math.Pow(10, float64(r.Intn(60)-30)))
		default: // short decimals, where the choice among shortest candidates matters
			f, _ := strconv.ParseFloat(strconv.Itoa(r.Intn(100000))+"e"+strconv.Itoa(r.Intn(660)-330), 64)
			fs = append(fs, f)
		}
	}
	return fs
}

func decodeCases(r *rand.Rand) [][]byte {
	var out [][]byte
	for _, p := range rawPieces {
		out = append(out, []byte(p), []byte(p+"x"), []byte("x"+p), []byte(p+p))
	}
	interesting := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
		0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff}
	for i := 0; i < 100; i++ { // long inputs, in case the runtime takes a different (vectorized) path for them
		b := make([]byte, 0, 8192)
		for len(b) < 64+r.Intn(8000) {
			if r.Intn(50) == 0 {
				b = append(b, rawPieces[r.Intn(len(rawPieces))]...)
			} else {
				b = append(b, byte(0x20+r.Intn(0x5f)))
			}
		}
		out = append(out, b)
	}
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(12))
		for j := range b {
			if r.Intn(2) == 0 {
				b[j] = interesting[r.Intn(len(interesting))]
			} else {
				b[j] = byte(r.Intn(256))
			}
		}
		out = append(out, b)
	}
	return out
}

// TestNode compares Parse+Stringify, FormatNumber and DecodeUTF8 with node byte for byte, in one node process.
func TestNode(t *testing.T) {
	t.Parallel()
	docs := append(corpus(1, 6000), largeDocs()...)
	r := rand.New(rand.NewSource(2))
	nums := numberCases(r)
	raws := decodeCases(r)

	var reqs []string
	for _, d := range docs {
		reqs = append(reqs, "P "+base64.StdEncoding.EncodeToString(d))
	}
	for _, f := range nums {
		reqs = append(reqs, fmt.Sprintf("N %016x", math.Float64bits(f)))
	}
	for _, b := range raws {
		reqs = append(reqs, "D "+base64.StdEncoding.EncodeToString(b))
	}
	answers := runNode(t, reqs)

	var valid, invalid, positions, failures int
	fail := func(format string, args ...any) {
		failures++
		if failures <= 30 {
			t.Errorf(format, args...)
		}
	}
	for i, d := range docs {
		ans := answers[i]
		v, err := Parse(d)
		switch {
		case strings.HasPrefix(ans, "O "):
			valid++
			want, _ := base64.StdEncoding.DecodeString(ans[2:])
			if err != nil {
				fail("%q: node parses it to %s, Parse fails: %v", d, want, err)
				continue
			}
			if got := Stringify(v); !bytes.Equal(got, want) {
				fail("%q:\n node %q\n   go %q", d, want, got)
			}
		case strings.HasPrefix(ans, "E "):
			invalid++
			if err == nil {
				fail("%q: node throws (%s), Parse gives %s", d, ans[2:], Stringify(v))
				continue
			}
			se := err.(*SyntaxError)
			fields := strings.SplitN(ans[2:], " ", 2)
			switch fields[0] {
			case "end":
				positions++
				if se.Offset != int64(len(d)) {
					fail("%q: node: %s; Parse: %v, expected offset %d", d, fields[1], err, len(d))
				}
			case "?":
			default:
				positions++
				if pos, _ := strconv.Atoi(fields[0]); utf16Offset(d, int(se.Offset)) != pos {
					fail("%q: node: %s; Parse: %v (UTF-16 index %d)", d, fields[1], err, utf16Offset(d, int(se.Offset)))
				}
			}
		default:
			fail("%q: node: %s", d, ans)
		}
	}
	for i, f := range nums {
		if want, got := answers[len(docs)+i][2:], FormatNumber(f); got != want {
			fail("FormatNumber(%v) [bits %016x] = %q, String() in node is %q", f, math.Float64bits(f), got, want)
		}
	}
	for i, b := range raws {
		want, _ := base64.StdEncoding.DecodeString(answers[len(docs)+len(nums)+i][2:])
		if got := DecodeUTF8(b); got != string(want) {
			fail("DecodeUTF8(% x) = %q, node %q", b, got, want)
		}
	}
	t.Logf("node agreed on %d documents (%d valid, %d refused, %d error offsets checked), %d numbers, %d byte strings",
		len(docs), valid, invalid, positions, len(nums), len(raws))
	if failures > 0 {
		t.Errorf("%d disagreements with node", failures)
	}
}

// largeDocs are big documents, in case V8 parses or stringifies long inputs differently from short ones.
func largeDocs() [][]byte {
	var events []byte
	blob := realisticBlob()
	events = append(events, '[')
	for i := 0; i < 300; i++ {
		if i > 0 {
			events = append(events, ',')
		}
		events = append(events, blob...)
	}
	events = append(events, ']')

	var long []byte
	long = append(long, `{"s":"`...)
	for i := 0; len(long) < 200_000; i++ {
		long = append(long, rawPieces[i%len(rawPieces)]...)
		long = append(long, edgeEscapes[i%len(edgeEscapes)]...)
		long = append(long, "plain ascii text "...)
	}
	long = append(long, `","latin1":"`...)
	for i := 0; i < 50_000; i++ {
		long = append(long, "é"...)
	}
	long = append(long, `"}`...)
	var numbers []byte
	numbers = append(numbers, '[')
	for i, n := range edgeNumbers {
		if i > 0 {
			numbers = append(numbers, ',')
		}
		numbers = append(numbers, n...)
	}
	numbers = append(numbers, ']')
	return [][]byte{events, long, numbers, nestedArrays(3000), mixedNesting(3000)}
}
