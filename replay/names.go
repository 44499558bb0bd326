package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// An operator names a blob the way it reaches them: the full name, the blob's URL, the GUID copied from a log
// or the dashboard, or any fragment that picks out one blob. A full name (anything with a "/": a path) means that
// blob and no other — one that does not exist is not found, never the nearest match, so an action can never touch
// a blob the operator did not name. Only an input without a "/" (a GUID, a piece of one) is a fragment: matched
// case-sensitively, looked for only where the command acts (restore among quarantine blobs, drain among root
// blobs), and an action says the full name it resolved to before it asks.

// Scope says which blobs a command may name.
type Scope func(name string) bool

// AnyBlob is every blob; QuarantineBlob a quarantine/ copy (what restore acts on).
func AnyBlob(string) bool          { return true }
func QuarantineBlob(n string) bool { return strings.HasPrefix(n, rules.QuarantinePrefix) }

// lookup is the outcome of resolving one argument.
type lookup struct {
	arg        string
	name       string   // the blob it names ("" when none or several)
	candidates []string // several matched: the first few
	more       int      // how many more matched than candidates holds
	closest    []string // none matched: the nearest names
	elsewhere  []string // none matched where the command acts, these did outside it
	fullName   bool     // the argument was a full name, matched exactly or not at all
}

func (lk lookup) err() error {
	switch {
	case len(lk.candidates) > 0:
		more := ""
		if lk.more > 0 {
			more = fmt.Sprintf("\n  … and %d more", lk.more)
		}
		return AmbiguousError{fmt.Errorf("%q matches %d blobs — give more of the name:\n  %s%s", lk.arg, len(lk.candidates)+lk.more, strings.Join(printable(lk.candidates), "\n  "), more)}
	case lk.name == "" && len(lk.elsewhere) > 0:
		return fmt.Errorf("%q matches only blobs this command does not act on (drain takes root blobs, restore quarantine/ ones):\n  %s", lk.arg, strings.Join(printable(lk.elsewhere), "\n  "))
	case lk.name == "" && lk.fullName:
		msg := fmt.Sprintf("no blob is named %q (a full name is matched exactly; a GUID or another piece of the name without a / is looked for)", lk.arg)
		if len(lk.closest) > 0 {
			msg += "; the closest names are:\n  " + strings.Join(printable(lk.closest), "\n  ")
		}
		return errors.New(msg)
	case lk.name == "":
		msg := fmt.Sprintf("no blob matches %q", lk.arg)
		if len(lk.closest) > 0 {
			msg += "; the closest names are:\n  " + strings.Join(printable(lk.closest), "\n  ")
		}
		return errors.New(msg)
	}
	return nil
}

func printable(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = textfmt.Printable(n)
	}
	return out
}

// maxCandidates is how many matches an ambiguous fragment lists.
const maxCandidates = 10

// resolveIn resolves each argument against the names a snapshot holds.
func resolveIn(snap *rules.Snapshot, container string, args []string, in Scope) []lookup {
	names := make([]string, 0, len(snap.Items))
	for i := range snap.Items {
		names = append(names, snap.Items[i].Name)
	}
	slices.Sort(names)
	out := make([]lookup, len(args))
	for i, arg := range args {
		out[i] = match(names, nameFromURL(arg, container), in)
		out[i].arg = arg
	}
	return out
}

// nameFromURL turns a blob URL (…/<container>/<name>, Azurite's …/<account>/<container>/<name>) into the name;
// anything else is returned as it is.
func nameFromURL(arg, container string) string {
	u, err := url.Parse(arg)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return arg
	}
	_, rest, ok := strings.Cut(u.EscapedPath(), "/"+url.PathEscape(container)+"/")
	if !ok {
		return arg
	}
	if n, err := url.PathUnescape(rest); err == nil {
		return n
	}
	return arg
}

// isFullName reports whether an argument names a blob by its full name (a path) rather than a fragment.
func isFullName(arg string) bool { return strings.Contains(arg, "/") }

// match picks the blob an argument names among sorted names: the exact name (whatever its scope: the command then
// says why it does not apply); for a full name, nothing else (the closest names are offered); for a fragment,
// the one name in Scope holding it (case-sensitively), else several candidates, else the closest names.
func match(names []string, arg string, in Scope) lookup {
	if _, ok := slices.BinarySearch(names, arg); ok {
		return lookup{name: arg}
	}
	if isFullName(arg) {
		var scoped []string
		for _, n := range names {
			if in(n) {
				scoped = append(scoped, n)
			}
		}
		return lookup{fullName: true, closest: closest(scoped, strings.ToLower(arg), 3)}
	}
	var hits, elsewhere []string
	for _, n := range names {
		if strings.Contains(n, arg) {
			if in(n) {
				hits = append(hits, n)
			} else if len(elsewhere) < maxCandidates {
				elsewhere = append(elsewhere, n)
			}
		}
	}
	frag := strings.ToLower(arg)
	switch {
	case len(hits) == 1:
		return lookup{name: hits[0]}
	case len(hits) > 1:
		n := min(len(hits), maxCandidates)
		return lookup{candidates: hits[:n], more: len(hits) - n}
	case len(elsewhere) > 0:
		return lookup{elsewhere: elsewhere}
	}
	var scoped []string
	for _, n := range names {
		if in(n) {
			scoped = append(scoped, n)
		}
	}
	return lookup{closest: closest(scoped, frag, 3)}
}

// closest returns the n names in which frag comes nearest to appearing (fewest edits to some part of the name).
func closest(names []string, frag string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	var best []scored
	for _, name := range names {
		d := substringDistance(frag, strings.ToLower(name))
		if d > max(2, len(frag)/2) {
			continue
		}
		best = append(best, scored{name, d})
	}
	slices.SortStableFunc(best, func(a, b scored) int { return a.d - b.d })
	out := []string{}
	for _, s := range best[:min(len(best), n)] {
		out = append(out, s.name)
	}
	return out
}

// substringDistance is the fewest single-character edits that turn pattern into some substring of s (the
// semi-global edit distance: free to start and end anywhere in s).
func substringDistance(pattern, s string) int {
	p := []rune(pattern)
	prev := make([]int, len(p)+1)
	cur := make([]int, len(p)+1)
	for i := range prev {
		prev[i] = i
	}
	best := prev[len(p)]
	for _, c := range s {
		cur[0] = 0
		for i := 1; i <= len(p); i++ {
			cost := 1
			if p[i-1] == c {
				cost = 0
			}
			cur[i] = min(prev[i-1]+cost, prev[i]+1, cur[i-1]+1)
		}
		best = min(best, cur[len(p)])
		prev, cur = cur, prev
	}
	return best
}

// ResolveOne finds the one blob a command like show names: straight by name when it exists, else by listing.
func ResolveOne(ctx context.Context, l *Loader, arg, container string, in Scope) (string, error) {
	name, _, err := resolveListed(ctx, l, arg, container, in)
	return name, err
}

// resolveListed is ResolveOne, with the listing it read when the name did not stand as given (nil otherwise).
func resolveListed(ctx context.Context, l *Loader, arg, container string, in Scope) (string, *rules.Snapshot, error) {
	name := nameFromURL(arg, container)
	switch _, err := l.Container.Stat(ctx, name); {
	case err == nil:
		return name, nil, nil
	case !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrInvalidName):
		return "", nil, err
	}
	snap, err := l.List(ctx)
	if err != nil {
		return "", nil, err
	}
	lk := resolveIn(snap, container, []string{arg}, in)[0]
	if err := lk.err(); err != nil {
		return "", snap, err
	}
	return lk.name, snap, nil
}

// ResolveRepairable is ResolveOne for the blob a repair replaces (edit NAME, resubmit --replaces NAME): a full name
// that is gone because a repair retired it finds that repair (said on w), so a retry of the repair meets its own
// blob rather than "no blob is named". The container is listed once (a million blobs take seconds).
func ResolveRepairable(ctx context.Context, w io.Writer, l *Loader, arg, container string) (string, error) {
	name, snap, err := resolveListed(ctx, l, arg, container, AnyBlob)
	if err == nil || !isFullName(arg) || snap == nil {
		return name, err
	}
	gone := nameFromURL(arg, container)
	var handled string
	for _, it := range snap.Items {
		if from := rules.MarksOf(it.Metadata).RepairedFrom; from == "" || from != gone {
			continue
		}
		if !strings.HasPrefix(it.Name, rules.ArchivedPrefix) {
			fmt.Fprintf(w, "%s is gone: a repair replaced it with %s\n", textfmt.Printable(gone), textfmt.Printable(it.Name))
			return it.Name, nil
		}
		handled = it.Name
	}
	if handled != "" { // the repair was replayed: repairing it again would send its events again
		return "", RepairHandledError{fmt.Errorf("%s is gone: a repair replaced it, and the replay has handled that repair since (%s): nothing is left to repair — to send a payload again, resubmit it without --replaces",
			textfmt.Printable(gone), textfmt.Printable(handled))}
	}
	return "", err
}

// ResolveNamed resolves the names an action was given: the blobs found, and a notFound result for each argument
// that names nothing (the action goes on with the rest). An ambiguous argument stops the action: nothing is
// touched until the operator says which blob they mean. Each fragment's full name is said on w first, so the
// question that follows is about blobs the operator has seen named.
func ResolveNamed(w io.Writer, snap *rules.Snapshot, container string, args []string, in Scope) (found []string, missing []rules.Result, err error) {
	seen := map[string]bool{}
	for _, lk := range resolveIn(snap, container, args, in) {
		if lk.name != "" && lk.name != lk.arg && !isFullName(lk.arg) {
			fmt.Fprintf(w, "%s is %s\n", textfmt.Printable(lk.arg), textfmt.Printable(lk.name))
		}
		switch {
		case lk.name != "" && seen[lk.name]:
			continue // one blob named twice (by GUID and by name, say) is acted on and reported once
		case len(lk.candidates) > 0:
			return nil, nil, lk.err()
		case lk.name == "":
			// One line: a result is one line of the report (the candidates, already escaped, comma-separated).
			msg := strings.ReplaceAll(strings.Replace(lk.err().Error(), ":\n  ", ": ", 1), "\n  ", ", ")
			missing = append(missing, rules.Result{Name: lk.arg, Outcome: rules.OutcomeNotFound, Reason: rules.Reason{Kind: rules.ReasonNotFound, Err: msg}})
		default:
			seen[lk.name] = true
			found = append(found, lk.name)
		}
	}
	return found, missing, nil
}

// AmbiguousError is a name that matches several blobs: nothing is acted on until the operator says which (the
// command line's usage error, exit 2).
type AmbiguousError struct{ error }

func (e AmbiguousError) Unwrap() error { return e.error }

// RepairHandledError is a repair asked of a blob a repair replaced and the replay has handled since: nothing is
// left to repair (the command line's exit 3: not done, nothing failed).
type RepairHandledError struct{ error }

func (e RepairHandledError) Unwrap() error { return e.error }
