// Package replay is the operations over a dead-letter container that follow from the estate's rules
// (replay/rules): listing and reading (Loader), drain, restore, acknowledgement, repair and resubmit, what became
// of a blob (WhereIs), the blobs the lifecycle rule took (Lost). Each action writes only under an ETag condition
// and reports a result per blob. The command line, the dashboard and the twin all call it; it never imports
// azblob or the UI, talks to storage through store.Container, and looks nothing up in the environment (who
// acknowledges is given by the caller).
package replay
