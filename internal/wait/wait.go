// Package wait is slotgate's one poll loop (fixtures, fault, and the tests
// and suites that wait on a condition of a real server): checked every
// interval until it holds, turns permanent, or the context ends. Ginkgo
// specs may use Gomega's Eventually where an assertion is the wait; tests
// synchronise on events where the code under test offers one.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// permanentError stops a poll early: the condition can no longer hold.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent wraps err so that Until returns it at once instead of polling
// on: the condition can no longer become true (a fixture closed under the
// wait, a node that is gone).
func Permanent(err error) error { return permanentError{err} }

// Until calls check at once and then every interval until it returns nil
// or a Permanent error (returned unwrapped), or ctx ends. On ctx's end the
// error wraps ctx.Err() and names the last reason the condition was not
// met, which is what a failed wait needs to say.
func Until(ctx context.Context, interval time.Duration, check func(ctx context.Context) error) error {
	t := time.NewTimer(interval)
	t.Stop()
	var last error
	for {
		// At once, even when ctx has ended already: a condition that
		// holds is reported as holding (a zero bound asks exactly that).
		err := check(ctx)
		if err == nil {
			return nil
		}
		var p permanentError
		if errors.As(err, &p) {
			return p.err
		}
		// A check that failed because ctx ended says less than the one
		// before it.
		if ctx.Err() == nil || last == nil {
			last = err
		}
		t.Reset(interval)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-t.C:
		}
	}
}

// Within is Until bounded by limit as well as by ctx.
func Within(ctx context.Context, limit, interval time.Duration, check func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return Until(ctx, interval, check)
}
