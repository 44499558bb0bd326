package rules

import "hash/maphash"

// nameIndex finds an item's position in a snapshot by its name. A map[string]int would hold a second string
// header and eight-byte position per blob — 40 MB at a million — and would keep the names of the first listing
// alive after every later one replaced them; this open-addressed table holds four bytes per slot and asks the
// items for their names.
type nameIndex struct {
	seed  maphash.Seed
	slots []int32 // position + 1; 0 is an empty slot
	n     int
}

// lookup returns the position of name among items.
func (x *nameIndex) lookup(items []*Item, name string) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for h := maphash.String(x.seed, name) & mask; ; h = (h + 1) & mask {
		p := x.slots[h]
		if p == 0 {
			return 0, false
		}
		if items[p-1].Name == name {
			return int(p - 1), true
		}
	}
}

// add records that items[pos] holds its name (not already indexed).
func (x *nameIndex) add(items []*Item, pos int) {
	if 2*(x.n+1) > len(x.slots) { // at most half full: probes stay short
		x.rebuild(items[:pos], 2*len(x.slots))
	}
	x.put(items[pos].Name, pos)
	x.n++
}

func (x *nameIndex) put(name string, pos int) {
	mask := uint64(len(x.slots) - 1)
	h := maphash.String(x.seed, name) & mask
	for x.slots[h] != 0 {
		h = (h + 1) & mask
	}
	x.slots[h] = int32(pos + 1)
}

// rebuild indexes items afresh in a table of at least size slots.
func (x *nameIndex) rebuild(items []*Item, size int) {
	n := 1024
	for n < size {
		n *= 2
	}
	if x.seed == (maphash.Seed{}) {
		x.seed = maphash.MakeSeed()
	}
	x.slots, x.n = make([]int32, n), 0
	for i, it := range items {
		x.put(it.Name, i)
		x.n++
	}
}
