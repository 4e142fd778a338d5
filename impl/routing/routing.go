// Package routing is the call path the relay's routed commands take on a
// cluster: the command pool, plus the one thing neither client library
// guarantees — that a MOVED, ASK or TRYAGAIN reply never reaches the caller
// (spec 000 §Conformance, Routing: "MOVED/ASK redirects under slot
// migration").
//
// go-redis follows MOVED/ASK itself but gives up after MaxRedirects (3)
// attempts, and its TRYAGAIN retries count against the same budget, so a slot
// held MIGRATING can hand a redirect back (found by the presence-mget row).
// valkey-go follows MOVED/ASK without limit but returns TRYAGAIN straight to
// the caller for commands it does not mark retryable. Pool re-sends such a
// command: each of these replies means the server did not execute it, so a
// re-send is safe even for INCR or a writing script.
package routing

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// Mutant selects a known-bad variant of the call path, for the routing
// row's negative controls. The zero value is the correct path.
type Mutant string

const (
	// MutantNone is the correct path: redirects re-sent within the budget.
	MutantNone Mutant = ""
	// MutantSwallowRedirects answers a MOVED/ASK/TRYAGAIN with an empty
	// success, the `let _ = conn.set(..)` bug: the caller believes a write
	// landed that the server refused.
	MutantSwallowRedirects Mutant = "swallow-redirects"
)

// DefaultBudget bounds how long one command is re-sent: a slot's keys move
// in well under a second on a healthy cluster.
const DefaultBudget = 5 * time.Second

// Options configures a Pool.
type Options struct {
	// Budget bounds the re-sends of one command; zero means DefaultBudget.
	Budget time.Duration
	// Absorbed, when set, counts every MOVED/ASK/TRYAGAIN reply the pool
	// absorbed by re-sending, so a run can show redirects really reached it.
	Absorbed *atomic.Int64
	Mutant   Mutant
}

// Pool is a client.Pool whose Do absorbs redirects the library handed back.
type Pool struct {
	client.Pool
	o Options
}

// Wrap returns p with redirect absorption.
func Wrap(p client.Pool, o Options) *Pool {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	return &Pool{Pool: p, o: o}
}

// Redirected reports a reply that means "not executed here, ask again":
// MOVED, ASK or TRYAGAIN.
func Redirected(err error) bool {
	switch client.KindOf(err) {
	case client.KindMoved, client.KindAsk, client.KindTryAgain:
		return true
	}
	return false
}

// Do sends cmd and re-sends it while the reply is a redirect, backing off
// 2 ms, 4 ms, ... up to 50 ms, until Budget has passed.
func (p *Pool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	deadline := time.Now().Add(p.o.Budget)
	backoff := 2 * time.Millisecond
	for {
		v, err := p.Pool.Do(ctx, cmd)
		if !Redirected(err) {
			return v, err
		}
		if p.o.Mutant == MutantSwallowRedirects {
			return nil, nil
		}
		if time.Now().After(deadline) {
			return v, err
		}
		if p.o.Absorbed != nil {
			p.o.Absorbed.Add(1)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}
