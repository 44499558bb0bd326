package jsjson

// stack is a LIFO kept in fixed-size chunks. The walks in this package push one frame per nesting level, and a
// hostile blob nests tens of millions of levels: a plain slice would copy itself on every growth (allocating
// about five times its final size, since append grows large slices by a quarter) and hold old and new copies
// at once. Chunks are allocated once each and never copied.
type stack[T any] struct {
	full  [][]T // the chunks under cur, each full
	cur   []T   // the top chunk
	spare []T   // a chunk emptied by pop, kept so that hovering at a chunk boundary does not allocate
	n     int
}

const stackChunk = 4096

func (s *stack[T]) push(v T) {
	if len(s.cur) == cap(s.cur) {
		switch {
		case s.cur == nil:
			s.cur = make([]T, 0, 16) // most walks are shallow
		case s.spare != nil:
			s.full = append(s.full, s.cur)
			s.cur, s.spare = s.spare[:0], nil
		default:
			s.full = append(s.full, s.cur)
			s.cur = make([]T, 0, stackChunk)
		}
	}
	s.cur = append(s.cur, v)
	s.n++
}

// top returns the top frame; the stack must not be empty.
func (s *stack[T]) top() *T { return &s.cur[len(s.cur)-1] }

func (s *stack[T]) pop() {
	s.cur = s.cur[:len(s.cur)-1]
	s.n--
	if len(s.cur) == 0 && len(s.full) > 0 {
		if cap(s.cur) == stackChunk {
			s.spare = s.cur
		}
		s.cur = s.full[len(s.full)-1]
		s.full = s.full[:len(s.full)-1]
	}
}

func (s *stack[T]) len() int { return s.n }
