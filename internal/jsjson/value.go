package jsjson

import (
	"math"
	"unsafe"
)

// Kind is the type of a JSON value as JavaScript sees it after JSON.parse.
type Kind uint8

// The zero Kind is Null so that the zero Value is JavaScript's null.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Value is a parsed JSON value with JavaScript semantics. It is 24 bytes: a 64 MiB blob can hold tens of
// millions of values and a wider, field-per-kind struct would triple the memory of a parse. Children of an
// array or object live contiguously in arenas owned by the parse, so a Value is never built by hand; the zero
// Value is null. Values are immutable and safe for concurrent reads.
type Value struct {
	// p is the first byte of a String, the first element (*Value) of an Array, the first member (*Member) of
	// an Object; nil when the length is 0.
	p unsafe.Pointer
	// x is the IEEE bits of a Number, 0 or 1 for a Bool, the length of a String (bytes), Array or Object.
	x    uint64
	kind Kind
}

// Member is one own property of an object.
type Member struct {
	Key string // WTF-8
	Val *Value
}

// Kind returns the value's kind; a nil *Value reads as null, like a missing JavaScript value read as null.
func (v *Value) Kind() Kind {
	if v == nil {
		return Null
	}
	return v.kind
}

// Bool returns the value of a Bool, false for any other kind.
func (v *Value) Bool() bool { return v != nil && v.kind == Bool && v.x != 0 }

// Num returns the value of a Number (possibly ±Inf or -0 after JSON.parse, never NaN), 0 for any other kind.
func (v *Value) Num() float64 {
	if v == nil || v.kind != Number {
		return 0
	}
	return math.Float64frombits(v.x)
}

// Str returns a String's contents in WTF-8, "" for any other kind.
func (v *Value) Str() string {
	if v == nil || v.kind != String || v.x == 0 {
		return ""
	}
	return unsafe.String((*byte)(v.p), int(v.x))
}

// Len returns the number of elements of an Array or own properties of an Object, 0 for any other kind.
func (v *Value) Len() int {
	if v == nil || (v.kind != Array && v.kind != Object) {
		return 0
	}
	return int(v.x)
}

func (v *Value) elems() []Value {
	if v.kind != Array || v.x == 0 {
		return nil
	}
	return unsafe.Slice((*Value)(v.p), int(v.x))
}

// Index returns element i of an Array, or nil when v is not an array or i is out of range (where JavaScript
// would read undefined).
func (v *Value) Index(i int) *Value {
	if v == nil {
		return nil
	}
	e := v.elems()
	if i < 0 || i >= len(e) {
		return nil
	}
	return &e[i]
}

// Members returns an Object's own properties in JavaScript enumeration order (the order of Object.keys and
// JSON.stringify): array-index keys ascending, then the others in order of first appearance. The slice is the
// object's own storage, returned without copying so that walking a large document costs nothing; do not modify
// it. It is nil for any other kind.
func (v *Value) Members() []Member {
	if v == nil || v.kind != Object || v.x == 0 {
		return nil
	}
	return unsafe.Slice((*Member)(v.p), int(v.x))
}

// Get returns the own property key of an Object. The search is linear: objects in dead letters are small,
// and an index per object would double the size of every parse to speed up the rare large one.
func (v *Value) Get(key string) (*Value, bool) {
	for _, m := range v.Members() {
		if m.Key == key {
			return m.Val, true
		}
	}
	return nil, false
}

// Depth returns the maximum nesting of v: 0 for a scalar, 1 for [] or {}, 2 for [[1]] and so on, as Scan
// counts it (Scan counts the text, so it also sees values a duplicate key threw away). It walks with a heap
// stack because v may be millions of levels deep. V8's JSON.stringify recurses and throws a RangeError past
// about 4,000 levels, which this number lets a caller predict.
func Depth(v *Value) int {
	if v == nil || (v.kind != Array && v.kind != Object) {
		return 0
	}
	type frame struct {
		v *Value
		i int
	}
	var st stack[frame]
	st.push(frame{v, 0})
	maxDepth := 1
	for st.len() > 0 {
		top := st.top()
		if top.i >= top.v.Len() {
			st.pop()
			continue
		}
		var child *Value
		if top.v.kind == Array {
			child = top.v.Index(top.i)
		} else {
			child = top.v.Members()[top.i].Val
		}
		top.i++
		if child.kind == Array || child.kind == Object {
			maxDepth = max(maxDepth, st.len()+1)
			if child.Len() > 0 {
				st.push(frame{child, 0})
			}
		}
	}
	return maxDepth
}
