package replay

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// TwinIndex records which root blobs have a copy of the replay function's (archived/ or quarantine/): the sign
// that the replay handled them. It keeps eight bytes per copy, not the names, so a streamed listing of a
// million-blob container can tell handled blobs apart without holding the container in memory.
type TwinIndex struct {
	archived, quarantine []uint64 // sorted hashes of the root names
}

var twinSeed = maphash.MakeSeed()

func twinKey(root string) uint64 { return maphash.String(twinSeed, root) }

// Twins lists the replay function's copies (the archived/ and quarantine/ prefixes only) into a TwinIndex.
func (l *Loader) Twins(ctx context.Context) (*TwinIndex, error) {
	ti := &TwinIndex{}
	for _, p := range [...]struct {
		prefix string
		into   *[]uint64
	}{{rules.ArchivedPrefix, &ti.archived}, {rules.QuarantinePrefix, &ti.quarantine}} {
		err := l.Container.List(ctx, p.prefix, func(page store.Page) error {
			for _, b := range page.Blobs {
				if root, ok := strings.CutPrefix(b.Name, p.prefix); ok && root != "" && b.Refused == "" {
					*p.into = append(*p.into, twinKey(root))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(*p.into)
	}
	return ti, nil
}

// Mark sets the twin flags of root items from the index.
func (ti *TwinIndex) Mark(items []rules.Item) {
	if ti == nil {
		return
	}
	for i := range items {
		if rules.IsRoot(items[i].Name) {
			k := twinKey(items[i].Name)
			_, items[i].ArchivedTwin = slices.BinarySearch(ti.archived, k)
			_, items[i].QuarantineTwin = slices.BinarySearch(ti.quarantine, k)
		}
	}
}
