package mutate

import (
	"cmp"
	"slices"
	"sync"
)

// Why runs go through a pool of suite processes (a smoke-mutate run must
// fit ~30 min on 2 cores): a spec run mostly waits on its servers (topology start-up,
// failover timeouts, paced traffic), so on 2 cores a second suite process
// nearly doubles the throughput of the coverage map and of the mutants,
// measured in docs/MUTATION.md. Each run is as isolated as before — its
// own topology on allocated ports, its own scratch files — so what runs
// beside it cannot change its verdict, only its wall-clock time.

// Pool runs f(i) for every i in order, at most jobs at once (jobs < 1 is
// 1), each i exactly once, and returns when all have returned. Items are
// handed out in order, so with one job it is a plain loop. stop, when not
// nil, is asked before each item is handed out: once it says true the
// remaining items are not started (the ones running finish).
func Pool(order []int, jobs int, stop func() bool, f func(i int)) {
	if jobs < 1 {
		jobs = 1
	}
	var mu sync.Mutex
	next := 0
	// take is asked by a worker once it is free, so stop sees every item
	// handed out before it finished.
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(order) || stop != nil && stop() {
			return 0, false
		}
		next++
		return order[next-1], true
	}
	var wg sync.WaitGroup
	for w := 0; w < min(jobs, len(order)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(); ok; i, ok = take() {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// LongestFirst is the order to hand n items to a pool in: the most
// expensive first (cost(i), the seconds its runs took in the baseline),
// ties in index order. Longest-first keeps a long survivor from starting
// last and running alone while the other suite process idles.
func LongestFirst(n int, cost func(i int) float64) []int {
	order := make([]int, n)
	costs := make([]float64, n)
	for i := range order {
		order[i], costs[i] = i, cost(i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
	return order
}

// inOrder is the order 0, 1, …, n-1.
func inOrder(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}
