package twin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// stepFile marks a step under way: written before a step touches the directory, removed once the state after it
// is saved. Found when the twin is opened, it says the last process stopped mid-step (kill -9, a crash, a power
// cut): its writes landed but the state that knew of them did not, and the twin repairs before it runs on.
const stepFile = "step"

// beginStep marks a step under way (a twin opened from nowhere, as the fuzz test's, keeps no mark).
func (tw *Twin) beginStep() error {
	if tw.place == nil || tw.stepping {
		return nil
	}
	if err := made.WriteFile(tw.place.File(stepFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n")); err != nil {
		return err
	}
	tw.stepping = true
	return nil
}

// endStep clears the mark, once the state after the step is saved.
func (tw *Twin) endStep() {
	if tw.place != nil && tw.stepping {
		os.Remove(tw.place.File(stepFile))
		tw.stepping = false
	}
}

// Repaired says what the twin repaired when it was opened after a process stopped mid-step ("" when nothing was
// to repair): the commands print it, so a repair is never silent.
func (tw *Twin) Repaired() string { return tw.repaired }

// repairIfStopped repairs the twin when the last process stopped mid-step. What a step did to the directory is
// there; what it did to the state is not. Every write it made is a blob the state does not know — taken in as a
// BlobCreated, as Event Grid would have sent one — and every blob it deleted leaves the state's known list. An
// event the saved state has outstanding and that is now nowhere was taken out of a blob by that step: if the
// replay function's archived copy holds it, the run republished it, and it is put back on its way (as the
// topic had accepted it); if nothing holds it, the lifecycle rule (or a hand) deleted its blob, and it is counted
// lost. Either way the account balances again, and Repaired says what was done.
func (tw *Twin) repairIfStopped(ctx context.Context) error {
	at, err := os.ReadFile(tw.place.File(stepFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	tw.stepping = true
	if err := tw.notice(ctx); err != nil {
		return err
	}
	w, err := tw.whereabouts(ctx)
	if err != nil {
		return err
	}
	nowhere := &nowhereSet{ids: map[string]bool{}, base: newBitmap(tw.st.base.len()), tw: tw}
	for id := range tw.st.Outstanding {
		if !w.inFlight[id] && !w.inBlobs[id] {
			nowhere.ids[id] = true
		}
	}
	for i := range tw.baseHashes() {
		if !tw.st.BaseGone.get(i) && !w.baseFlight.get(i) && !w.baseBlobs.get(i) {
			nowhere.base.set(i)
			nowhere.nbase++
		}
	}
	back, lost := 0, 0
	if len(nowhere.ids)+nowhere.nbase > 0 {
		if back, err = tw.republishArchived(ctx, nowhere); err != nil {
			return err
		}
		for id := range nowhere.ids {
			tw.lose(id)
			lost++
		}
		for i := range tw.baseHashes() {
			if nowhere.base.get(i) {
				tw.st.BaseGone.set(i)
				tw.st.Totals.Lost++
				lost++
			}
		}
	}
	tw.repaired = fmt.Sprintf("the last twin process stopped mid-step (started %s) and was repaired: the blobs it wrote were taken in", strings.TrimSpace(string(at)))
	if back > 0 {
		tw.repaired += fmt.Sprintf("; %d event(s) its replay runs republished were put back on their way", back)
	}
	if lost > 0 {
		tw.repaired += fmt.Sprintf("; %d event(s) whose blob it deleted were counted lost", lost)
	}
	return tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()})
}

// republishArchived puts back on their way the events of nowhere that an archived copy holds (the replay function
// archives a blob only after republishing its events), removing them from nowhere; it returns how many.
func (tw *Twin) republishArchived(ctx context.Context, nowhere *nowhereSet) (int, error) {
	l, err := store.ListAll(ctx, tw.dir)
	if err != nil {
		return 0, err
	}
	type found struct {
		attempt rules.Attempt
		body    json.RawMessage
		from    string // the subscription of the blob it was archived from
		id      string
	}
	latest := map[string]found{} // an event archived more than once goes back as its latest republish
	for _, bi := range l.Blobs {
		if !isArchived(bi.Name) {
			continue
		}
		b, err := tw.dir.Read(ctx, bi.Name, store.MaxBlobBytes)
		if err != nil {
			return 0, err
		}
		orig := strings.TrimPrefix(bi.Name, rules.ArchivedPrefix)
		pv := tw.cfg.Plan(orig, b.Body, rules.ParsePayload(b.Body))
		for _, e := range pv.Republish {
			p := rules.ParseID(e.ID, tw.cfg.Separator)
			k := eventKey(e.ID, tw.cfg.Separator)
			if f, ok := latest[k]; nowhere.has(k) && (!ok || f.attempt < p.Attempt || p.Uncountable && len(e.ID) > len(f.id)) {
				latest[k] = found{id: e.ID, attempt: p.Attempt, body: e.Body, from: rules.ParseBlobName(orig).Subscription}
			}
		}
	}
	n := 0
	for _, id := range sortedKeys(latest) {
		f := latest[id]
		nowhere.remove(id)
		if err := (&publisher{tw: tw, from: f.from}).Publish(ctx, []json.RawMessage{f.body}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// nowhereSet are outstanding events found nowhere: by id, or by position in the base.
type nowhereSet struct {
	tw    *Twin
	ids   map[string]bool
	base  bitmap
	nbase int
}

func (n *nowhereSet) has(id string) bool {
	if n.ids[id] {
		return true
	}
	i := n.tw.st.base.index(idHash(id))
	return i >= 0 && n.base.get(i)
}

func (n *nowhereSet) remove(id string) {
	if n.ids[id] {
		delete(n.ids, id)
		return
	}
	if i := n.tw.st.base.index(idHash(id)); i >= 0 && n.base.get(i) {
		n.base[i/8] &^= 1 << (i % 8)
		n.nbase--
	}
}
