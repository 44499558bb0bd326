// Package rules is the estate's dead-letter rules, each in exactly one function — which pane a blob is in, what a
// payload is, how a replay id counts attempts, how each event is judged, what the replay function will do with a
// blob, what needs a human, a subscription's readiness, what an ack covers, what a drain, restore or repair plans
// — and the metadata schema the actions stamp. It is pure: it imports no store (directly or not) and does no I/O
// (layers_test.go holds it to that); package replay carries the rules out over a container.
package rules
