package twin

import "time"

// pushOutage is a handler going down while the rehearsal runs, for the second witness to see: the estate of a
// quiet afternoon — a budget-guard stop of four hours, ending an hour and a half before the opening (the replay
// down with it; its start re-uploaded what was a TTL old, and a few of the last hour's dead letters stranded) —
// and ten minutes after the rehearsal opens the push-notification service
// goes down for an hour. The push subscription carries most of the traffic (four events a minute), so Event
// Grid's metrics say it failing the minute it fails and recovering the minute it comes back — an hour before the
// container's first dead letter of it, and after its last.
func pushOutage() Script {
	opens := budgetGuardHours*time.Hour + 90*time.Minute
	at := func(d time.Duration) time.Duration { return opens + d }
	return Script{Name: "push-outage", Opens: opens,
		Subs: estateSubs(240),
		Windows: []Window{
			budgetGuardStop[0], budgetGuardStop[1],
			{Sub: "push-notifications", From: at(PushOutageFrom), To: at(PushOutageFrom + time.Hour), Status: 503, Outcome: "Busy",
				Why: "the push service is down"},
		},
		Starts: []AppStart{budgetGuardStart},
	}
}

// PushOutageFrom is when, after the rehearsal opens, push-outage's push service goes down (for an hour).
const PushOutageFrom = 10 * time.Minute
