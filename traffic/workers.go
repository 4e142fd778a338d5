package traffic

import (
	"context"
	"sync"
	"time"
)

// UntilStopped is untilStopped, for a row's own workload: n workers, each
// calling round(worker, r) for r = 0, 1, … until stop is closed or ctx ends.
func UntilStopped(ctx context.Context, stop <-chan struct{}, n int, pace time.Duration, round func(worker, r int)) {
	untilStopped(ctx, stop, n, pace, round)
}

// untilStopped runs n workers, each calling round(worker, r) for r = 0, 1,
// … until stop is closed or ctx ends, and returns once all have returned.
// A positive pace is waited before every round.
func untilStopped(ctx context.Context, stop <-chan struct{}, n int, pace time.Duration, round func(worker, r int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for r := 0; !stopped(ctx, stop, pace); r++ {
				round(i, r)
			}
		})
	}
	wg.Wait()
}

// stopped waits pace (if positive) and reports whether stop was closed or
// ctx ended meanwhile, or already had.
func stopped(ctx context.Context, stop <-chan struct{}, pace time.Duration) bool {
	if pace <= 0 {
		select {
		case <-stop:
			return true
		case <-ctx.Done():
			return true
		default:
			return false
		}
	}
	select {
	case <-stop:
		return true
	case <-ctx.Done():
		return true
	case <-time.After(pace):
		return false
	}
}
