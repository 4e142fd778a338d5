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
// re-send is safe even for INCR or a writing script. A command whose reply
// never came (a timeout, a broken connection) is never re-sent: it may have
// run, and a second INCR would count twice (the caller gets the error and
// the outcome stays unknown).
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
	// MutantBudgetFromCall is the call path before redirect-after-stall was
	// fixed: the budget is a deadline fixed when the call starts and
	// no re-send is guaranteed, so a call whose first attempt outlasted the
	// budget (a stalled runner, or go-redis retrying read timeouts inside
	// one Process) hands the first redirect it meets to the caller, however
	// briefly the redirect lasts.
	MutantBudgetFromCall Mutant = "budget-from-call"
)

// DefaultBudget bounds how long a command keeps being redirected: a slot's
// keys move in well under a second on a healthy cluster.
const DefaultBudget = 5 * time.Second

// MinResends is how often a redirected command is re-sent before the budget
// may end the call: the budget measures how long redirects last, never how
// long the command took to be answered.
const MinResends = 8

// Options configures a Pool.
type Options struct {
	// Budget bounds how long a command is re-sent, counted from its first
	// redirect reply; zero means DefaultBudget.
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
// 2 ms, 4 ms, ... up to 50 ms, at least MinResends times and until Budget
// has passed since the first redirect. Only then does a redirect reach the
// caller: the slot did not settle.
func (p *Pool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	var since time.Time // the first redirect reply
	if p.o.Mutant == MutantBudgetFromCall {
		since = time.Now()
	}
	backoff := 2 * time.Millisecond
	for resends := 0; ; resends++ {
		v, err := p.Pool.Do(ctx, cmd)
		if !Redirected(err) {
			return v, err
		}
		if since.IsZero() {
			since = time.Now()
		}
		settled := resends >= MinResends || p.o.Mutant == MutantBudgetFromCall
		if settled && time.Since(since) > p.o.Budget {
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
