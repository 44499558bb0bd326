package jsjson

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// Parse is JSON.parse(Buffer.from(b).toString("utf8")): it returns the value JavaScript would build, or a
// *SyntaxError where JavaScript would throw. A __proto__ key is an ordinary own property, as JSON.parse makes
// it; callers that mimic later JavaScript code decide what it means there.
//
// The input is validated by the same code as Scan first, so both always agree on errors, and then built in a
// second, check-free pass. All of a document's values, members and string bytes share a few arenas, so any
// value kept alive keeps the whole document alive.
func Parse(b []byte) (*Value, error) {
	if _, _, _, err := scan(b, nil, false); err != nil {
		return nil, err
	}
	// Capacities that let a typical dead letter parse without growing any stack.
	p := builder{
		b:     b,
		vals:  make([]Value, 0, 32),
		keys:  make([]string, 0, 32),
		first: make([]int, 0, 32),
	}
	p.first, p.last = p.first[:0:16], p.first[16:16:32]
	root := new(Value)
	*root = p.build()
	return root, nil
}

// builder turns validated text into Values with explicit stacks, never recursion.
type builder struct {
	b []byte
	// vals holds the finished children of every open container, innermost container's last.
	vals []Value
	// keys holds the keys of the members in vals that belong to open objects, in the same order.
	keys []string
	// frames has one entry per open container: len(vals) when it opened, complemented (^) for an object.
	frames stack[int]
	// pending holds, per open object, the key of the member whose value is being read. It moves to keys when
	// that value is finished, so that keys grows with finished members only; frames and pending are what grow
	// with the nesting depth, and they are chunked stacks.
	pending stack[string]

	valArena []Value
	memArena []Member
	strArena []byte
	chunk    int
	intern   map[string]string
	scratch  []byte
	first    []int // per distinct key of the object being closed: index of its first occurrence
	last     []int // ... and of its last occurrence, whose value wins
	dedupe   map[string]int
	order    []indexKey
}

type indexKey struct {
	n uint32 // the array index the key denotes
	u int    // which distinct key
}

func (p *builder) build() Value {
	b := p.b
	i := skipWS(b, 0)
	var v Value
	for {
		switch c := b[i]; {
		case c == '[' || c == '{':
			f := len(p.vals)
			if c == '{' {
				f = ^f
			}
			p.frames.push(f)
			if i = skipWS(b, i+1); b[i] != c+2 {
				if c == '{' {
					i = p.key(i)
				}
				continue
			}
			i++
			v = p.close()
		case c == '"':
			v, i = p.str(i)
		case c == 't':
			v, i = Value{kind: Bool, x: 1}, i+4
		case c == 'f':
			v, i = Value{kind: Bool}, i+5
		case c == 'n':
			v, i = Value{}, i+4
		default:
			v, i = p.number(i)
		}
		for {
			if p.frames.len() == 0 {
				return v
			}
			inObj := *p.frames.top() < 0
			p.vals = append(p.vals, v)
			if inObj {
				p.keys = append(p.keys, *p.pending.top())
				p.pending.pop()
			}
			if i = skipWS(b, i); b[i] == ',' {
				i = skipWS(b, i+1)
				if inObj {
					i = p.key(i)
				}
				break
			}
			i++ // ']' or '}'
			v = p.close()
		}
	}
}

// key reads the member name at b[i] and the colon after it, and returns the offset of the member's value.
func (p *builder) key(i int) int {
	end, special := stringEnd(p.b, i+1)
	raw := p.b[i+1 : end]
	if special {
		p.scratch = appendUnquoted(p.scratch[:0], raw)
		raw = p.scratch
	}
	p.pending.push(p.internKey(raw))
	i = skipWS(p.b, end+1)
	return skipWS(p.b, i+1)
}

// internKey shares the storage of repeated keys, as V8 does: an array of a million events then holds each
// field name once.
func (p *builder) internKey(raw []byte) string {
	if k, ok := knownKey(raw); ok {
		return k
	}
	if k, ok := p.intern[string(raw)]; ok {
		return k
	}
	k := p.storeString(raw)
	if len(k) <= 64 && len(p.intern) < 1<<16 {
		if p.intern == nil {
			p.intern = make(map[string]string)
		}
		p.intern[k] = k
	}
	return k
}

func (p *builder) str(i int) (Value, int) {
	end, special := stringEnd(p.b, i+1)
	raw := p.b[i+1 : end]
	if special {
		p.scratch = appendUnquoted(p.scratch[:0], raw)
		raw = p.scratch
	}
	s := p.storeString(raw)
	return Value{kind: String, p: unsafe.Pointer(unsafe.StringData(s)), x: uint64(len(s))}, end + 1
}

func (p *builder) number(i int) (Value, int) {
	b := p.b
	start := i
	if b[i] == '-' {
		i++
	}
	digits := i
	var m uint64
	for i < len(b) && b[i]-'0' < 10 {
		m = m*10 + uint64(b[i]-'0')
		i++
	}
	var f float64
	if i-digits <= 15 && (i >= len(b) || (b[i] != '.' && b[i] != 'e' && b[i] != 'E')) {
		f = float64(m) // exact: fewer than 16 digits fit in 53 bits
		if b[start] == '-' {
			f = -f // -0 stays -0, as in JavaScript
		}
	} else {
		for i < len(b) && (b[i]-'0' < 10 || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-') {
			i++
		}
		// ParseFloat rounds correctly, returning ±Inf (with ErrRange) on overflow and ±0 on underflow,
		// which is what JavaScript does; the error says nothing JavaScript would.
		f, _ = strconv.ParseFloat(string(b[start:i]), 64)
	}
	return Value{kind: Number, x: math.Float64bits(f)}, i
}

// close pops the innermost container, whose children are the top of vals, and returns its Value.
func (p *builder) close() Value {
	f := *p.frames.top()
	p.frames.pop()
	if f >= 0 {
		elems := p.vals[f:]
		v := Value{kind: Array, x: uint64(len(elems))}
		if len(elems) > 0 {
			s := p.allocVals(len(elems))
			copy(s, elems)
			v.p = unsafe.Pointer(&s[0])
		}
		p.vals = p.vals[:f]
		return v
	}
	start := ^f
	vs := p.vals[start:]
	ks := p.keys[len(p.keys)-len(vs):]
	v := p.object(ks, vs)
	p.vals = p.vals[:start]
	p.keys = p.keys[:len(p.keys)-len(vs)]
	return v
}

// object builds an object as JSON.parse does with CreateDataProperty: a repeated key keeps the position of its
// first occurrence and the value of its last, and the members are then laid out in enumeration order.
func (p *builder) object(ks []string, vs []Value) Value {
	if len(ks) == 0 {
		return Value{kind: Object}
	}
	first, last := p.first[:0], p.last[:0]
	if len(ks) <= 16 {
	small:
		for j, k := range ks {
			for u, fj := range first {
				if ks[fj] == k {
					last[u] = j
					continue small
				}
			}
			first, last = append(first, j), append(last, j)
		}
	} else {
		if p.dedupe == nil {
			p.dedupe = make(map[string]int)
		}
		clear(p.dedupe)
		for j, k := range ks {
			if u, ok := p.dedupe[k]; ok {
				last[u] = j
				continue
			}
			p.dedupe[k] = len(first)
			first, last = append(first, j), append(last, j)
		}
	}
	p.first, p.last = first, last

	// Array-index keys come first, in ascending numeric order; the others keep their order of creation.
	order := p.order[:0]
	for u, j := range first {
		if n, ok := arrayIndex(ks[j]); ok {
			order = append(order, indexKey{n, u})
		}
	}
	p.order = order
	if len(order) > 0 {
		slices.SortFunc(order, func(a, b indexKey) int { return cmp.Compare(a.n, b.n) })
	}

	mem := p.allocMembers(len(first))
	val := p.allocVals(len(first))
	put := func(pos, u int) {
		val[pos] = vs[last[u]]
		mem[pos] = Member{Key: ks[first[u]], Val: &val[pos]}
	}
	pos := 0
	for _, o := range order {
		put(pos, o.u)
		pos++
	}
	for u, j := range first {
		if len(order) > 0 {
			if _, ok := arrayIndex(ks[j]); ok {
				continue
			}
		}
		put(pos, u)
		pos++
	}
	return Value{kind: Object, p: unsafe.Pointer(&mem[0]), x: uint64(len(mem))}
}

// arrayIndex reports whether key is an array index in the ECMAScript sense: the canonical decimal form of an
// integer 0 ≤ n < 2^32−1. Such keys enumerate before all others; "01", "-1" and "4294967295" are ordinary.
func arrayIndex(key string) (uint32, bool) {
	if len(key) == 0 || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i] - '0'
		if c >= 10 {
			return 0, false
		}
		n = n*10 + uint64(c)
	}
	if n >= 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

// chunkFor sizes the next arena chunk: about what a document of this size needs (a value takes at least two
// bytes of text, usually far more), doubling up to a cap for large ones.
func (p *builder) chunkFor(n int) int {
	if p.chunk == 0 {
		p.chunk = min(max(len(p.b)/24, 16), 4096)
	} else if p.chunk < 4096 {
		p.chunk *= 2
	}
	return max(n, p.chunk)
}

func (p *builder) allocVals(n int) []Value {
	if n > len(p.valArena) {
		if n >= 1024 {
			return make([]Value, n)
		}
		p.valArena = make([]Value, p.chunkFor(n))
	}
	s := p.valArena[:n:n]
	p.valArena = p.valArena[n:]
	return s
}

func (p *builder) allocMembers(n int) []Member {
	if n > len(p.memArena) {
		if n >= 1024 {
			return make([]Member, n)
		}
		p.memArena = make([]Member, p.chunkFor(n))
	}
	s := p.memArena[:n:n]
	p.memArena = p.memArena[n:]
	return s
}

// storeString copies s into the string arena. Bytes once written there are never changed, which is what
// makes the unsafe.String over them sound.
func (p *builder) storeString(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	if cap(p.strArena)-len(p.strArena) < len(s) {
		if len(s) >= 4096 {
			return string(s)
		}
		// Decoded strings are rarely longer than their text, so the input's size (capped) is a good chunk.
		p.strArena = make([]byte, 0, min(max(len(p.b), 256), 64<<10))
	}
	off := len(p.strArena)
	p.strArena = append(p.strArena, s...)
	return unsafe.String(&p.strArena[off], len(s))
}
