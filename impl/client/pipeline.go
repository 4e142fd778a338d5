package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/slotgate/slotgate/impl/slot"
)

// Result is one command's answer in a pipeline or a transaction: its reply
// in Pool.Do's vocabulary (nil, int64, string, float64, []any,
// map[string]any), or its own error — a *ServerError for an error reply, a
// *RefusedError for a command the library would not send, any other error
// for a failed round trip (outcome unknown). Exactly one of the two is set,
// except for a nil reply (both nil).
type Result struct {
	Reply any
	Err   error
}

// ErrTxAborted is returned by Exec when EXEC answered nil: the server
// discarded the transaction (a WATCHed key changed). Nothing of it ran.
var ErrTxAborted = errors.New("transaction aborted: EXEC answered nil")

// pipelineBudget bounds how long DoMulti and Exec keep re-sending commands
// the server proved it did not run, counted from the first send: long
// enough for a slot move and a graceful failover to settle (seconds), short
// enough that a caller is told.
const pipelineBudget = 10 * time.Second

// resendable reports an error that proves the command did not run and may
// run elsewhere or later: a redirect the library handed back (MOVED, ASK),
// TRYAGAIN (a slot mid-migration holds part of a multi-key request),
// CLUSTERDOWN and LOADING, or a connection that never opened. A timeout or
// a broken connection is not: the command may have run, its outcome is
// unknown, and re-sending a write would apply it twice (spec 000
// §Conformance, Routing).
func resendable(err error) bool {
	if err == nil {
		return false
	}
	switch KindOf(err) {
	case KindMoved, KindAsk, KindTryAgain, KindClusterDown, KindLoading:
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// backoff is the pause before re-send attempt n (1, 2, ...): go-redis's
// own RetryBackoff shape (8 ms doubling, jittered, at most 512 ms).
func backoff(ctx context.Context, n int) error {
	d := min(8*time.Millisecond+time.Duration(rand.Int64N(int64(8*time.Millisecond)<<min(n, 6))), 512*time.Millisecond)
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// doMulti is DoMulti over both backends: send runs one library pipeline
// and answers each command at its index. Every command is answered on its
// own: a command the server proved it did not run (resendable) is sent
// again, alone with the others like it, until it runs or pipelineBudget
// passes, and then carries its last error; every other error stays with
// its command. A command re-sent runs after the rest of its batch, so a
// caller that needs two commands in order puts them on one key (they are
// redirected together) or in a transaction.
func doMulti(ctx context.Context, cmds []Cmd, send func(context.Context, []Cmd) []Result) []Result {
	out := make([]Result, len(cmds))
	var idx []int
	for i, c := range cmds {
		if err := c.validate(); err != nil {
			out[i] = Result{Err: err}
			continue
		}
		idx = append(idx, i)
	}
	deadline := time.Now().Add(pipelineBudget)
	for attempt := 1; len(idx) > 0; attempt++ {
		batch := make([]Cmd, len(idx))
		for j, i := range idx {
			batch[j] = cmds[i]
		}
		res := send(ctx, batch)
		var again []int
		for j, i := range idx {
			out[i] = res[j]
			if resendable(res[j].Err) {
				again = append(again, i)
			}
		}
		if len(again) == 0 || !time.Now().Before(deadline) || backoff(ctx, attempt) != nil {
			break
		}
		idx = again
	}
	return out
}

// exec is Exec over both backends: send runs MULTI, cmds, EXEC once and
// returns either every command's result (EXEC ran) or the error that
// decided the transaction — for an EXECABORT, the queued command's error
// that dirtied it. A transaction the server proved it did not run is sent
// again, whole, until it runs or pipelineBudget passes; one whose EXEC
// reply did not come (a timeout, a broken connection) is never re-sent:
// it may have committed, and its error says the outcome is unknown.
// Spec 000 §Conformance, Routing (MOVED/ASK/TRYAGAIN) and Locality
// contract: every key of a transaction is in one slot, checked here before
// anything is sent.
func exec(ctx context.Context, cmds []Cmd, send func(context.Context, []Cmd) ([]Result, error)) ([]Result, error) {
	if len(cmds) == 0 {
		return nil, fmt.Errorf("transaction without a command: %w", ErrBadCommand)
	}
	var keys []string
	for _, c := range cmds {
		if err := c.validate(); err != nil {
			return nil, err
		}
		keys = append(keys, c.Keys...)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("transaction without a key: %w", ErrBadCommand)
	}
	if !slot.Same(keys...) {
		return nil, &RefusedError{Kind: KindCrossSlot, Msg: fmt.Sprintf("transaction keys %v are not in one slot", keys)}
	}
	deadline := time.Now().Add(pipelineBudget)
	for attempt := 1; ; attempt++ {
		res, err := send(ctx, cmds)
		if err == nil {
			return res, nil
		}
		if !resendable(err) || !time.Now().Before(deadline) || backoff(ctx, attempt) != nil {
			return nil, fmt.Errorf("transaction on slot %d: %w", slot.Of(keys[0]), err)
		}
	}
}
