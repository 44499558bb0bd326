package tui

import (
	"testing"

	"github.com/deadletter/deadletter/replay/rules"
)

// Every number of the overview opens exactly what it counts: for each cell of the grid (subscription × reason,
// subscription × the replay's fate) and each hour of the chart, the filter enter applies selects exactly the blobs
// whose events the number counts, and their events add up to it. The expected blobs are worked out here from the
// picture's own rules (handled blobs count through their copies; fates are the root's), not from the filter.
func TestEveryOverviewCellOpensWhatItCounts(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 400, 60) // wide: every reason has its column
	m := hs.m
	m.recheck(true)
	o, snap, p := m.overview, m.snap, m.overview.pic
	if o.hidden > 0 {
		t.Fatalf("%d reason columns hidden at 400 columns", o.hidden)
	}
	counted := func(it *rules.Item) bool { return !cfg.AlertsOf(it, snap.Now).Handled && it.Summary != nil }
	check := func(label, q string, want int, contributes func(it *rules.Item) int) {
		t.Helper()
		m.filter.text = q
		match := m.filter.match(snap, cfg)
		if m.filter.err != "" {
			t.Fatalf("%s: %q does not parse: %s", label, q, m.filter.err)
		}
		sum, cells := 0, 0
		for i := range snap.Items {
			it := snap.Items[i]
			n := 0
			if counted(it) {
				n = contributes(it)
			}
			got := match != nil && match(i)
			if got != (n > 0) {
				t.Errorf("%s (%q): %s is selected %v, but the cell counts %d of its events", label, q, it.Name, got, n)
			}
			sum += n
			if got {
				cells++
			}
		}
		if sum != want {
			t.Errorf("%s (%q): the selected blobs hold %d of its events, the cell says %d", label, q, sum, want)
		}
	}
	o.section = 1
	for r, sub := range p.Subscriptions {
		for c, col := range o.cols {
			o.row, o.col = r, c
			q, ok := o.target()
			if !ok {
				t.Fatalf("no query for %s × %s", sub, col.title)
			}
			ofSub := func(it *rules.Item) bool { return it.Parsed.Subscription == sub }
			if col.reason >= 0 {
				reason := p.Reasons[col.reason]
				check(sub+" × "+reason, q, p.Matrix[r][col.reason].Events, func(it *rules.Item) int {
					if !ofSub(it) {
						return 0
					}
					for _, x := range it.Summary.Reasons {
						if x.Value == reason {
							return x.N
						}
					}
					return 0
				})
				continue
			}
			fate := col.fate
			check(sub+" × "+fate.String(), q, p.Fates[r][fate], func(it *rules.Item) int {
				if !ofSub(it) || !rules.IsRoot(it.Name) {
					return 0
				}
				s := it.Summary
				switch {
				case s.Malformed:
					if fate == rules.FateMalformed {
						return max(s.Events, 1) // (a payload that does not parse counts one)
					}
				case s.CrashDepth > 0:
					if fate == rules.FateCrash {
						return max(s.Events, 1)
					}
				default:
					for _, v := range rules.AllVerdicts {
						if v.String() == fate.String() || v == rules.VerdictUnknown && fate == rules.FateUnknown {
							return s.Verdicts.Of(v)
						}
					}
				}
				return 0
			})
		}
	}
	o.section = 0
	for h := 0; h < o.hours; h++ {
		o.hour = h
		q, _ := o.target()
		hour := p.Hours[len(p.Hours)-o.hours+h]
		check("hour "+hour.Format("01-02T15"), q, p.HourTotal(len(p.Hours)-o.hours+h), func(it *rules.Item) int {
			if it.Parsed.Hour().Equal(hour) {
				return max(it.Summary.Events, 1)
			}
			return 0
		})
	}
}
