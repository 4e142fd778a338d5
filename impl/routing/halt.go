package routing

import (
	"context"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// HaltAll is a known-bad call path for the failure-drills row's control: it
// models the residual failure mode of spec 000 §Client Architecture ("a dead
// primary halts dispatch pending topology refresh"). When one command fails
// without a server reply (a dead node), every command waits while that one
// is re-sent every 50 ms until it succeeds or Budget passes — so commands
// for healthy shards halt with it.
type HaltAll struct {
	client.Pool
	Budget time.Duration
	mu     sync.RWMutex
}

// Do implements client.Pool.
func (h *HaltAll) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	h.mu.RLock()
	v, err := h.Pool.Do(ctx, cmd)
	h.mu.RUnlock()
	if err == nil || client.KindOf(err) != "" || ctx.Err() != nil {
		return v, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The refresh outlives the caller's deadline, as a topology refresh
	// does: every other command waits for it, not for this caller.
	rctx := context.WithoutCancel(ctx)
	deadline := time.Now().Add(h.Budget)
	for time.Now().Before(deadline) {
		if v, err = h.Pool.Do(rctx, cmd); err == nil {
			return v, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return v, err
}
