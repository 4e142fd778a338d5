package traffic

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
)

// The bad call paths below are the routing and client-surface rows'
// negative controls: middleware a relay plausibly puts between itself and
// the client library. They wrap a pool's Do (DoMulti and Exec pass
// through) and live with the harness, not in impl: nothing the relay ships
// has them.

// SwallowRedirects answers a MOVED/ASK/TRYAGAIN reply with an empty
// success, the `let _ = conn.set(..)` bug: the caller believes a write
// landed that the server refused (spec 000 §Failure Modes: a stale slot
// map that silently loses writes). Under a redirect-absorbing call path
// (impl/routing) it is the path that takes the first redirect for success.
func SwallowRedirects(p client.Pool) client.Pool { return swallowing{p} }

type swallowing struct{ client.Pool }

func (s swallowing) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	v, err := s.Pool.Do(ctx, cmd)
	if routing.Redirected(err) {
		return nil, nil
	}
	return v, err
}

// RetryUnknownOutcome re-sends a command whose reply never came (a
// timeout, a broken connection: an error with no server reply) up to three
// times, each with a fresh deadline of timeout: at-least-once delivery, as
// a generic retry middleware does. An INCR or a writing script whose first
// send did run is applied twice while the caller sees one success. The
// timeout is fixed, not what is left of the caller's: under a
// redirect-absorbing path the re-sends would otherwise get less and less,
// and come back acknowledged less often. resentAcked, when set, counts the
// re-sends that came back acknowledged: the hazard met (the first send may
// have run too), so a run can show its control had something to catch.
func RetryUnknownOutcome(p client.Pool, timeout time.Duration, resentAcked *atomic.Int64) client.Pool {
	return retrying{Pool: p, timeout: timeout, resentAcked: resentAcked}
}

type retrying struct {
	client.Pool
	timeout     time.Duration
	resentAcked *atomic.Int64
}

func (r retrying) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	v, err := r.Pool.Do(ctx, cmd)
	for range 3 {
		if err == nil || client.KindOf(err) != "" || r.timeout <= 0 {
			break
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
		v, err = r.Pool.Do(rctx, cmd)
		cancel()
		if err == nil && r.resentAcked != nil {
			r.resentAcked.Add(1)
		}
	}
	return v, err
}
