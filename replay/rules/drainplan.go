package rules

import (
	"time"
)

// DrainPlan is a drain before it runs, made once from a listing (Config.PlanDrain) and used by everything that
// drains — the command line's question, its --dry-run and its drain, the dashboard's dialog and the twin's
// rehearsals — as RestorePreview is for a reblob. It says which blobs the drain re-uploads and under which ETags
// (Targets), which it leaves and why (Forecast.Left: each the result the drain reports for it), and what the
// replay will then do with what it re-uploads (the Forecast's counts).
type DrainPlan struct {
	Forecast
	// Targets are the blobs the drain re-uploads (or tries again: Forecast.Unreadable), each held to the ETag it
	// was listed with, in the order given.
	Targets []DrainTarget
	// Taken are the listed items of Targets, in the same order.
	Taken []Item
	// Items are every blob the plan was made for, in the order given; Readiness is of their subscriptions,
	// reckoned from the whole snapshot (the replay's copies and the live blobs are evidence too). Never nil.
	Items     []Item
	Readiness []Readiness
	// Options are what the plan was made with: IncludeHandled and Force.
	Options DrainOptions
	// Now is the service time the blobs were listed at.
	Now time.Time
	// AppStart is what the estate's own drain would re-upload if a worker started now, of the whole listing: the
	// one-move remediation beside this drain, and what it would repeat that this drain leaves.
	AppStart AppStart
	// all are the targets of every item: the drain gives the ones it leaves the results Left says, in order.
	all []DrainTarget
}

// PlanDrain plans a drain of items, listed in s, with o's IncludeHandled and Force.
func (c Config) PlanDrain(s *Snapshot, items []Item, o DrainOptions) *DrainPlan {
	o = DrainOptions{IncludeHandled: o.IncludeHandled, Force: o.Force}
	p := &DrainPlan{Forecast: c.ForecastDrain(items, o, s.Now), Items: items, Options: o, Now: s.Now,
		Readiness: ReadinessOf(c.Readiness(s.Items, s.Now), items), AppStart: c.AppStartDrain(s.Items, s.Now)}
	take := make(map[string]bool, len(p.Names))
	for _, n := range p.Names {
		take[n] = true
	}
	p.all = make([]DrainTarget, len(items))
	n := 0
	for i := range items {
		p.all[i] = c.DrainTargetOf(&items[i], s.Now)
		if take[p.all[i].Name] {
			n++
		}
	}
	if n == len(items) { // (every item taken, the usual drain of the stranded: the same slices, not copies of them)
		p.Targets, p.Taken = p.all, items
		return p
	}
	for i := range items {
		if take[p.all[i].Name] {
			p.Targets = append(p.Targets, p.all[i])
			p.Taken = append(p.Taken, items[i])
		}
	}
	return p
}

// PlanDrainStranded plans the drain with no names: every stranded blob of s.
func (c Config) PlanDrainStranded(s *Snapshot) *DrainPlan {
	return c.PlanDrain(s, s.InPane(PaneStranded), DrainOptions{})
}

// Every is the target of every blob the plan was made for, in order: the drain gives the ones it leaves the
// results Left says.
func (p *DrainPlan) Every() []DrainTarget { return p.all }

// Only is the plan narrowed to the given items of it (by name), planned as they were: what a drain takes of them,
// what it leaves, in the same order — without the listing, which a plan made earlier may no longer match.
func (p *DrainPlan) Only(items []Item) *DrainPlan {
	keep := map[string]bool{}
	for _, it := range items {
		keep[it.Name] = true
	}
	q := *p
	q.Items, q.Targets, q.Taken, q.all, q.Names, q.Left = nil, nil, nil, nil, nil, nil
	for i, it := range p.Items {
		if keep[it.Name] {
			q.Items, q.all = append(q.Items, it), append(q.all, p.all[i])
		}
	}
	for i, t := range p.Targets {
		if keep[t.Name] {
			q.Targets, q.Taken = append(q.Targets, t), append(q.Taken, p.Taken[i])
		}
	}
	for _, n := range p.Names {
		if keep[n] {
			q.Names = append(q.Names, n)
		}
	}
	for _, r := range p.Left {
		if keep[r.Name] {
			q.Left = append(q.Left, r)
		}
	}
	return &q
}
