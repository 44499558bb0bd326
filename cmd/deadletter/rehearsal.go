package main

import (
	"context"
	"sort"
	"time"

	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/tui"
)

// rehearsalControls is a running twin's controls as the dashboard's t screen takes them.
type rehearsalControls struct{ run *twin.Runner }

func (r rehearsalControls) Look(ctx context.Context) (tui.RehearsalLook, error) {
	l, err := r.run.Look(ctx)
	out := tui.RehearsalLook{Clock: l.Clock, Speed: l.Speed, Paused: l.Paused, Account: l.Account.String(), Balanced: l.Account.Balanced(),
		Source: l.Source}
	for _, w := range l.Script.Windows {
		rw := tui.RehearsalWindow{Who: w.Sub, From: l.Start.Add(w.From), Status: w.Status, Outcome: w.Outcome, Why: w.Why}
		if w.To != twin.UntilFurtherNotice {
			rw.To = l.Start.Add(w.To)
		}
		out.Script = append(out.Script, rw)
	}
	sort.SliceStable(out.Script, func(i, j int) bool { return out.Script[i].From.Before(out.Script[j].From) })
	for _, s := range l.Script.Subs {
		out.Who = append(out.Who, s.Name)
	}
	out.Who = append(out.Who, twin.ReplayFunction)
	return out, err
}

func (r rehearsalControls) Toggle() bool                   { return r.run.Toggle() }
func (r rehearsalControls) SetSpeed(speed float64) float64 { return r.run.SetSpeed(speed) }
func (r rehearsalControls) Jump(ctx context.Context, d time.Duration) error {
	return r.run.Jump(ctx, d)
}

// Change is the dashboard's edit of the script: through the runner, the one place a twin's script changes.
func (r rehearsalControls) Change(who string, down bool, status int) error {
	_, err := r.run.Change(twin.Change{Who: who, Down: down, To: twin.UntilFurtherNotice, Status: status, Why: "set from the dashboard"})
	return err
}
