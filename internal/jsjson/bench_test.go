package jsjson

import (
	"strconv"
	"testing"
)

// realisticBlob is a 2 KB Event Grid dead letter as it lands in the container: a compact array of events,
// each with Event Grid's diagnostics next to the schema fields.
func realisticBlob() []byte {
	var b []byte
	b = append(b, '[')
	for i := 0; i < 4; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		n := strconv.Itoa(i)
		b = append(b, `{"id":"9530fe10-f604-a554-d596-06628616019`+n+`",`+
			`"subject":"/thread-replies/a821562`+n+`",`+
			`"eventType":"ProcessThreadReply","dataVersion":"1.0",`+
			`"data":{"threadId":"t-48213`+n+`","replyId":"r-99120`+n+`","author":{"id":"u-1`+n+`","name":"Zoë Müller"},`+
			`"text":"Thanks! See https://example.com/a?b=c&d=e \u2014 \"quoted\"","attempt":`+n+`,"tags":["x","y"]},`+
			`"deadLetterReason":"TimeToLiveExceeded","deliveryAttempts":10,"lastDeliveryOutcome":"TimedOut",`+
			`"lastHttpStatusCode":408,"publishTime":"2026-11-01T07:11:02.529037509Z",`+
			`"lastDeliveryAttemptTime":"2026-11-01T08:11:30.529037509Z"}`...)
	}
	return append(b, ']')
}

// BenchmarkScanFields is the per-blob cost of hydration's fast path: validate, split into events, read every
// field and unquote the strings.
func BenchmarkScanFields(b *testing.B) {
	blob := realisticBlob()
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := Scan(blob)
		if err != nil {
			b.Fatal(err)
		}
		for _, sp := range res.Elements {
			Fields(blob[sp.Start:sp.End], func(key string, val []byte) {
				switch key {
				case "id", "subject", "eventType", "dataVersion", "deadLetterReason", "lastDeliveryOutcome",
					"publishTime", "lastDeliveryAttemptTime":
					n += len(Unquote(val))
				}
			})
		}
	}
	_ = n
}

// BenchmarkScan is validation alone.
func BenchmarkScan(b *testing.B) {
	blob := realisticBlob()
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse builds the whole tree, as the detail view does.
func BenchmarkParse(b *testing.B) {
	blob := realisticBlob()
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(blob); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStringify(b *testing.B) {
	v, err := Parse(realisticBlob())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = AppendStringify(buf[:0], v)
	}
	b.SetBytes(int64(len(buf)))
}
