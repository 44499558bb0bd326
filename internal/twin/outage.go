package twin

import "time"

// pushOutage is a handler going down while the rehearsal runs, for the second witness to see: the estate of a
// quiet afternoon — a budget-guard stop three hours before (the replay down with it, so a few dead letters of
// every subscription were stranded) — and ten minutes after the rehearsal opens the push-notification service
// goes down for an hour. The push subscription carries most of the traffic (four events a minute), so Event
// Grid's metrics say it failing the minute it fails and recovering the minute it comes back — an hour before the
// container's first dead letter of it, and after its last.
func pushOutage() Script {
	opens := 3*time.Hour + 30*time.Minute
	at := func(d time.Duration) time.Duration { return opens + d }
	return Script{Name: "push-outage", Opens: opens,
		Subs: []Sub{
			{Name: "push-notifications", EventType: "ProcessPushNotification", Rate: 240},
			{Name: "friend-requests", EventType: "ProcessFriendRequest", Rate: 8},
			{Name: "thread-replies", EventType: "ProcessThreadReply", Rate: 6},
			{Name: "webhooks", EventType: "ProcessWebhook", Rate: 3},
			{Name: "blob-deletions", EventType: "ProcessBlobDeletion", Rate: 4},
			{Name: "storage-ledger", EventType: "Microsoft.Storage.BlobCreated", System: true, Rate: 2},
		},
		Windows: []Window{
			{Sub: AllHandlers, From: 0, To: 2 * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
			{Sub: ReplayFunction, From: 0, To: 2 * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
			{Sub: "push-notifications", From: at(PushOutageFrom), To: at(PushOutageFrom + time.Hour), Status: 503, Outcome: "Busy",
				Why: "the push service is down"},
		},
	}
}

// PushOutageFrom is when, after the rehearsal opens, push-outage's push service goes down (for an hour).
const PushOutageFrom = 10 * time.Minute
