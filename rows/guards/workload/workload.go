// Package workload drives the guards row's contention (spec 000 §System
// Model, "Replay guard / rate limit"): callers released together on the
// same replay-guard event id and the same rate-limit subject, round after
// round, on keys of chosen slots, recording every call as a judge.Call. It
// asserts nothing.
package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/guard"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/rows/guards/judge"
	"github.com/slotgate/slotgate/traffic"
)

// TagIn is a hash tag starting with prefix whose keys hash to slot s.
func TagIn(prefix string, s int) string {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%s-%d", prefix, i)
		if slot.Of("{"+tag+"}") == s {
			return tag
		}
	}
}

// Community is a community name whose guard keys (guard.ReplayKey,
// guard.RateKey) all hash to slot s: the hash tag is the community's.
func Community(prefix string, s int) string { return "c{" + TagIn(prefix, s) + "}" }

// Contention races Callers callers on each of Keys event ids and Keys
// subjects per round, on every slot of Slots, until stopped.
type Contention struct {
	Replay  *guard.Replay
	Limiter *guard.Limiter
	// Name prefixes the callers and the communities, so runs side by side
	// never share a key.
	Name          string
	Slots         []int
	Keys, Callers int
	// Timeout bounds each call.
	Timeout time.Duration

	mu    sync.Mutex
	calls []judge.Call
}

// Run drives rounds on every slot until stop is closed, each round's calls
// released together, and returns when the last round has ended.
func (w *Contention) Run(ctx context.Context, clock *traffic.Clock, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, s := range w.Slots {
		community := Community(w.Name, s)
		wg.Go(func() {
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				w.round(ctx, clock, community, s, round)
			}
		})
	}
	wg.Wait()
}

// round races every caller of one round's keys, released together.
func (w *Contention) round(ctx context.Context, clock *traffic.Clock, community string, s, round int) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range w.Keys {
		event, subject := fmt.Sprintf("ev-%d-%d", round, k), fmt.Sprintf("sub-%d-%d", round, k)
		for c := range w.Callers {
			caller := fmt.Sprintf("%s/%d", w.Name, c)
			wg.Go(func() {
				<-start
				w.call(ctx, clock, judge.GuardReplay, guard.ReplayKey(community, event), s, caller, func(ctx context.Context) (bool, error) {
					return w.Replay.First(ctx, community, event)
				})
			})
			wg.Go(func() {
				<-start
				w.call(ctx, clock, judge.GuardLimit, guard.RateKey(community, subject), s, caller, func(ctx context.Context) (bool, error) {
					return w.Limiter.Allow(ctx, community, subject)
				})
			})
		}
	}
	close(start)
	wg.Wait()
}

func (w *Contention) call(ctx context.Context, clock *traffic.Clock, g judge.Guard, key string, s int, caller string, do func(context.Context) (bool, error)) {
	cctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	c := judge.Call{Guard: g, Key: key, Slot: s, Caller: caller, Call: clock.Now()}
	ok, err := do(cctx)
	c.Return, c.Admitted = clock.Now(), ok && err == nil
	if err != nil {
		c.ErrKind, c.Err = traffic.ErrKind(err), err.Error()
	}
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
}

// Calls returns a copy of the recorded calls.
func (w *Contention) Calls() []judge.Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]judge.Call(nil), w.calls...)
}
