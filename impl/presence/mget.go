package presence

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// Value is one position of a bulk read: the key's value, or Present false
// for a nil reply (missing, expired, or not a string).
type Value struct {
	Val     string
	Present bool
}

// ReadMode selects how a bulk read is sent. Only ReadPerSlot is correct on a
// cluster; the others are the naive variants the presence-mget row must
// catch (spec 000 §Conformance, Presence MGET).
type ReadMode string

const (
	// ReadPerSlot groups the keys by hash slot, sends one MGET per slot and
	// puts every answer back at its caller's position; TRYAGAIN (a slot
	// mid-migration holding only part of a group) is retried within a budget.
	ReadPerSlot ReadMode = "per-slot"
	// ReadSingleMGet sends one MGET of every key: CROSSSLOT from the server
	// (go-redis) or a client refusal (valkey-go) on any cluster.
	ReadSingleMGet ReadMode = "single-mget"
	// ReadNilOnFailure splits per slot but answers nil for every key of a
	// part that failed, and no error: a present user reads as absent.
	ReadNilOnFailure ReadMode = "nil-on-failure"
	// ReadConcatenated splits per slot and appends the parts in slot order,
	// losing the caller's positions (a split that forgot to scatter back).
	ReadConcatenated ReadMode = "concatenated"
	// ReadNoRetry splits per slot but returns TRYAGAIN to the caller.
	ReadNoRetry ReadMode = "no-retry"
)

// ReadOptions configures a bulk read.
type ReadOptions struct {
	// Mode is the read strategy; zero means ReadPerSlot.
	Mode ReadMode
	// Parallel bounds the per-slot MGETs in flight; zero means 8.
	Parallel int
	// TryAgainBudget bounds how long a part answered TRYAGAIN is retried;
	// zero means DefaultTryAgainBudget.
	TryAgainBudget time.Duration
	// Retries, when set, counts every TRYAGAIN retry, so a caller can show
	// that a read really spanned a slot migration.
	Retries *atomic.Int64
	// Redirects, when set, counts retries of a MOVED or ASK the client
	// library handed back instead of following (go-redis gives up after
	// MaxRedirects attempts, and its TRYAGAIN retries count against them).
	Redirects *atomic.Int64
}

// DefaultTryAgainBudget is how long a per-slot part is retried on TRYAGAIN,
// and the caller's deadline bounds it too. A slot answers TRYAGAIN to a
// multi-key read for as long as it is MIGRATING with part of the group
// absent, which is the whole migration of that slot, not just the move of
// the keys read: a few keys' slot held MIGRATING 1 s stayed so 4.07 s on a
// loaded 2-core runner, and a 3 s budget handed TRYAGAIN to three bulk
// reads (presence-mget/errors). A slot of many
// keys takes longer still. Presence is a hint, so a read that cannot finish
// within this still reports the error rather than wait for ever.
const DefaultTryAgainBudget = 10 * time.Second

// MGet reads keys with the per-slot split (ReadPerSlot): one MGET per hash
// slot, positions and nils preserved exactly, duplicates answered at each of
// their positions. It is the slot-correct bulk read of spec 000 §System
// Model (Presence: "bulk MGET is auto-split per node by redis-rs"); Valkey
// refuses a multi-key command spanning slots even on one node, so the split
// is per slot, not per node.
func MGet(ctx context.Context, p client.Pool, keys []string) ([]Value, error) {
	return Read(ctx, p, keys, ReadOptions{})
}

// Read reads keys with the strategy o.Mode.
func Read(ctx context.Context, p client.Pool, keys []string, o ReadOptions) ([]Value, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if o.Mode == ReadSingleMGet {
		//slotgate:disabled-mode-only ReadSingleMGet is the naive one-MGET read kept as the negative control: CROSSSLOT on a cluster, correct only with cluster mode disabled
		reply, err := p.Do(ctx, client.NewCmd("MGET", keys))
		if err != nil {
			return nil, fmt.Errorf("mget %d keys: %w", len(keys), err)
		}
		return values(reply, len(keys))
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.TryAgainBudget <= 0 {
		o.TryAgainBudget = DefaultTryAgainBudget
	}
	groups := bySlot(keys)
	parts := make([][]Value, len(groups))
	errs := make([]error, len(groups))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			parts[i], errs[i] = readPart(ctx, p, g, o)
		}()
	}
	wg.Wait()
	out := make([]Value, len(keys))
	if o.Mode == ReadConcatenated {
		out = out[:0]
		for _, part := range parts {
			out = append(out, part...)
		}
		out = append(out, make([]Value, len(keys)-len(out))...)
	}
	for i, g := range groups {
		if errs[i] != nil {
			if o.Mode == ReadNilOnFailure {
				continue // the bug: a failed part reads as "absent"
			}
			return nil, errs[i]
		}
		if o.Mode == ReadConcatenated {
			continue
		}
		for j, pos := range g.pos {
			out[pos] = parts[i][j]
		}
	}
	return out, nil
}

// group is the keys of one slot and their positions in the caller's slice.
type group struct {
	slot int
	keys []string
	pos  []int
}

// bySlot groups keys by slot, in ascending slot order (deterministic).
func bySlot(keys []string) []group {
	idx := map[int]int{}
	var gs []group
	for pos, k := range keys {
		s := slot.Of(k)
		i, ok := idx[s]
		if !ok {
			i = len(gs)
			idx[s] = i
			gs = append(gs, group{slot: s})
		}
		gs[i].keys = append(gs[i].keys, k)
		gs[i].pos = append(gs[i].pos, pos)
	}
	sort.Slice(gs, func(a, b int) bool { return gs[a].slot < gs[b].slot })
	return gs
}

// readPart sends one single-slot MGET, retrying within the budget (unless
// the mode is ReadNoRetry or ReadNilOnFailure) on TRYAGAIN — a migrating
// slot holding part of the group — and on a MOVED or ASK the client library
// returned rather than followed: sent again, the client follows it afresh.
func readPart(ctx context.Context, p client.Pool, g group, o ReadOptions) ([]Value, error) {
	retry := o.Mode == ReadPerSlot || o.Mode == "" || o.Mode == ReadConcatenated
	deadline := time.Now().Add(o.TryAgainBudget)
	backoff := 5 * time.Millisecond
	for {
		//slotgate:same-slot g is one group of bySlot: every key in it has the same slot.Of
		reply, err := p.Do(ctx, client.NewCmd("MGET", g.keys))
		if err == nil {
			return values(reply, len(g.keys))
		}
		kind := client.KindOf(err)
		retryable := kind == client.KindTryAgain || kind == client.KindMoved || kind == client.KindAsk
		if !retry || !retryable || time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("mget %d keys of slot %d: %w", len(g.keys), g.slot, err)
		}
		switch {
		case kind == client.KindTryAgain && o.Retries != nil:
			o.Retries.Add(1)
		case kind != client.KindTryAgain && o.Redirects != nil:
			o.Redirects.Add(1)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, fmt.Errorf("mget %d keys of slot %d: %w (after %w)", len(g.keys), g.slot, ctx.Err(), err)
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

// values reads an MGET reply of n elements.
func values(reply any, n int) ([]Value, error) {
	vals, isNil, err := client.AsStrings(reply)
	if err != nil {
		return nil, fmt.Errorf("read mget reply: %w", err)
	}
	if len(vals) != n {
		return nil, fmt.Errorf("mget reply has %d elements for %d keys: %w", len(vals), n, client.ErrUnexpectedReply)
	}
	out := make([]Value, n)
	for i := range vals {
		out[i] = Value{Val: vals[i], Present: !isNil[i]}
	}
	return out, nil
}
