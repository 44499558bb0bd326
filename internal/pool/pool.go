// Package pool runs work with bounded concurrency: the one worker pool behind hydration, drain and restore.
package pool

import "sync"

// Each calls do(i) for every i in [0, n), at most limit at a time (limit ≤ 0 means 1), and returns when all have
// returned. Work is handed out in index order, so a caller that stops early (do checks a cancelled context and
// returns at once) leaves the untouched tail at the end.
func Each(limit, n int, do func(i int)) {
	if limit <= 0 {
		limit = 1
	}
	limit = min(limit, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < limit; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				do(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}
