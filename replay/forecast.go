package replay

// Forecast is what draining a set of blobs sets in motion, from their summaries.
type Forecast struct {
	Blobs, Events, Malformed, Crash, Handled, Unread int
	Bytes                                            int64
	Verdicts                                         VerdictCounts
}

// ForecastDrain adds up what the replay function will do with the given blobs once they are drained.
func ForecastDrain(items []Item) Forecast {
	f := Forecast{Blobs: len(items)}
	for i := range items {
		it := &items[i]
		f.Bytes += it.Size
		if h, _ := handled(it); h {
			f.Handled++
		}
		if it.Summary == nil {
			f.Unread++
			continue
		}
		f.Events += it.Summary.Events
		switch {
		case it.Summary.Malformed:
			f.Malformed++
		case it.Summary.CrashDepth > 0:
			f.Crash++
		}
		f.Verdicts.Add(it.Summary.Verdicts)
	}
	return f
}
