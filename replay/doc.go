// Package replay holds the estate's dead-letter rules, each in exactly one function — which pane a blob is in,
// what a payload is, how a replay id counts attempts, how each event is judged, what the replay function will do
// with a blob, what needs a human — and the operations over a container that follow from them: listing and
// reading (Loader), drain, restore, acknowledgement, check and the changes watch reports. The command line and
// the dashboard both call it. It never imports azblob or the UI; it talks to storage through store.Container.
package replay
