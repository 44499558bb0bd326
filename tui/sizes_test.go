package tui

import (
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/textfmt"
)

// Every component draws inside the region its SetSize gave it (component.go): no View is wider or taller than
// allowed — a bar, a table, the overview and whatever is on the focus stack, at the smallest screen and a wide one,
// on each screen an operator reaches (the overview, a pane, a blob, help, the filter, a drain's question).
func TestEveryViewFitsItsSize(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	for _, size := range [][2]int{{minW, minH}, {140, 45}} {
		hs := newHarness(t, mem, cfg, size[0], size[1])
		for _, keys := range [][]string{{"o"}, {"1"}, {"1", "enter"}, {"?"}, {"1", "/", "w", "e", "b"}, {"1", "ctrl+a", "d"}} {
			hs.press("esc", "esc", "esc")
			hs.press(keys...)
			m := hs.m
			var all []component
			all = append(all, m.bars()...)
			for _, tb := range m.tables {
				all = append(all, tb)
			}
			all = append(all, m.overview)
			all = append(all, m.stack...)
			for _, c := range all {
				for _, wh := range [][2]int{{minW, 1}, {minW, 2}, {minW, minH - 4}, {size[0], size[1] - 4}} {
					c.SetSize(wh[0], wh[1])
					lines := strings.Split(c.View(), "\n")
					if len(lines) > wh[1] {
						t.Errorf("after %v, %T at %d×%d draws %d lines", keys, c, wh[0], wh[1], len(lines))
					}
					for i, l := range lines {
						if w := textfmt.Width(l); w > wh[0] {
							t.Errorf("after %v, %T at %d×%d draws line %d %d wide: %q", keys, c, wh[0], wh[1], i, w, l)
							break
						}
					}
				}
			}
			m.layout() // back to the screen's own sizes
		}
	}
}
