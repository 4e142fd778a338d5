// Package traffic drives the reference implementation with concurrent,
// seeded workloads and records what happened as histories the pure checkers
// in check/ judge. It asserts nothing.
package traffic

import (
	"context"
	"errors"
	"sync"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
)

// Clock gives monotonic offsets from a scenario's start, so histories from
// concurrent goroutines share one time axis: the history's clock.
type Clock = history.Clock

// NewClock starts a clock of its own. Prefer ClockOf, the scenario's.
func NewClock() *Clock { return history.NewClock() }

// ClockOf is the clock of the scenario history ctx carries, so workload
// offsets, fault windows and spans share one axis (a fresh clock outside
// a recorded scenario).
func ClockOf(ctx context.Context) *Clock { return history.From(ctx).Clock() }

// Recorder collects a scenario's history and the loud outcome of every
// operation. Safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	fencing  []history.FencingOp
	outcomes []history.OpOutcome
}

// Fencing records one directory operation.
func (r *Recorder) Fencing(op history.FencingOp) {
	r.mu.Lock()
	r.fencing = append(r.fencing, op)
	r.mu.Unlock()
}

// Outcome records one operation's loud result.
func (r *Recorder) Outcome(op string, err error) {
	o := history.OpOutcome{Op: op, ErrKind: ErrKind(err)}
	if err != nil {
		o.Err = err.Error()
		if client.IsRefused(err) {
			o.Err = "refused by the client library before sending: " + o.Err
		}
	}
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.mu.Unlock()
}

// FencingHistory returns a copy of the recorded directory history.
func (r *Recorder) FencingHistory() []history.FencingOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]history.FencingOp(nil), r.fencing...)
}

// Outcomes returns a copy of the recorded outcomes.
func (r *Recorder) Outcomes() []history.OpOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]history.OpOutcome(nil), r.outcomes...)
}

// ErrKind classifies err for history.OpOutcome: the error code (CROSSSLOT,
// NOSCRIPT, …) whether the server sent it or the client library refused
// with it, "network" for anything without a reply, "" for success.
func ErrKind(err error) string {
	if err == nil {
		return ""
	}
	if k := client.KindOf(err); k != "" {
		return string(k)
	}
	var reply fixtures.ReplyError // an admin command's error reply
	if errors.As(err, &reply) {
		return string(client.ParseServerError(string(reply)).Kind)
	}
	return "network"
}
