package tui

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// paged lists a container in small pages, and lets a test act between them or fail one.
type paged struct {
	*storetest.Mem
	size   int
	mu     sync.Mutex
	before func(page int) // runs before page n (from 0) is handed over
	failAt int            // the page that fails (-1: none)
}

func (p *paged) List(ctx context.Context, prefix string, visit func(store.Page) error) error {
	var all []store.BlobInfo
	p.Mem.List(ctx, prefix, func(pg store.Page) error { all = append(all, pg.Blobs...); return nil })
	for n := 0; len(all) > 0; n++ {
		p.mu.Lock()
		before, failAt := p.before, p.failAt
		p.mu.Unlock()
		if before != nil {
			before(n)
		}
		if n == failAt {
			return errors.New("list: connection reset by peer")
		}
		k := min(p.size, len(all))
		// A page holds what exists when it is answered: a blob deleted meanwhile is not on it.
		var page []store.BlobInfo
		for _, b := range all[:k] {
			if p.Mem.Has(b.Name) {
				page = append(page, b)
			}
		}
		if err := visit(store.Page{Blobs: page, ServiceTime: fixedNow}); err != nil {
			return err
		}
		all = all[k:]
	}
	return nil
}

func pagedFixture(t *testing.T) (*paged, rules.Config) {
	mem, cfg := fixture(t, 40)
	return &paged{Mem: mem, size: 7, failAt: -1}, cfg
}

// Pages of seven: every blob arrives once though subscriptions straddle page boundaries, and the counts and
// rows equal one unpaged listing's.
func TestPagedListing(t *testing.T) {
	t.Parallel()
	pc, cfg := pagedFixture(t)
	paged := newHarness(t, pc, cfg, 160, 48)
	whole := newHarness(t, pc.Mem, cfg, 160, 48)
	for i, tb := range paged.m.tables {
		got, want := names(paged.m, tb), names(whole.m, whole.m.tables[i])
		if !slices.Equal(got, want) {
			t.Fatalf("pane %s: paged rows differ:\n%v\n%v", tb.pane, got, want)
		}
	}
	if paged.screen() != whole.screen() {
		t.Fatalf("the paged screen differs:\n%s\n%s", paged.screen(), whole.screen())
	}
}

func names(m *Model, tb *table) []string {
	var out []string
	for _, i := range tb.rows {
		out = append(out, m.snap.Items[i].Name)
	}
	return out
}

// A blob deleted between two pages of a refresh leaves the table and the loader's cache when the listing ends.
func TestBlobDeletedBetweenPages(t *testing.T) {
	t.Parallel()
	pc, cfg := pagedFixture(t)
	hs := newHarness(t, pc, cfg, 160, 48)
	victim := hs.m.snap.Items[len(hs.m.snap.Items)-1].Name // on the last page
	if !inTables(hs.m, victim) {
		t.Fatalf("%s is not listed", victim)
	}
	cached := hs.m.opt.Session.Loader().CacheSize()
	pc.mu.Lock()
	pc.before = func(n int) {
		if n == 1 {
			pc.Mem.Delete(context.Background(), victim, "")
		}
	}
	pc.mu.Unlock()
	hs.advance(hs.m.opt.Interval) // the next poll lists again
	if _, ok := hs.m.snap.Lookup(victim); ok {
		t.Fatalf("%s is still in the snapshot", victim)
	}
	if inTables(hs.m, victim) {
		t.Fatalf("%s is still in a table", victim)
	}
	if c := hs.m.opt.Session.Loader().CacheSize(); c != cached-1 {
		t.Fatalf("the cache holds %d summaries, want %d", c, cached-1)
	}
}

func inTables(m *Model, name string) bool {
	for _, tb := range m.tables {
		if slices.Contains(names(m, tb), name) {
			return true
		}
	}
	return false
}

// A listing that fails on page 3 keeps the rows of pages 1 and 2, shows the error, and retries.
func TestListingErrorOnPageThree(t *testing.T) {
	t.Parallel()
	pc, cfg := pagedFixture(t)
	pc.failAt = 2
	hs := newHarness(t, pc, cfg, 120, 40)
	if n := len(hs.m.snap.Items); n != 14 {
		t.Fatalf("%d blobs kept, want the 14 of two pages", n)
	}
	hs.shows("PARTIAL: listing failed after 14", "retry in", "connection reset by peer")
	hs.lacks("Could not read the container")
	pc.mu.Lock()
	pc.failAt = -1
	pc.mu.Unlock()
	hs.advance(hs.m.opt.Interval)
	hs.lacks("PARTIAL", "connection reset")
	if n, want := len(hs.m.snap.Items), len(mustList(t, pc.Mem)); n != want {
		t.Fatalf("after the retry %d blobs, want %d", n, want)
	}
}

func mustList(t *testing.T, c store.Container) []store.BlobInfo {
	l, err := store.ListAll(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return l.Blobs
}
