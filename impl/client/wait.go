package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"
)

// Waiter is a Pool that can follow commands with WAIT on the very connection
// that ran them. Replication is asynchronous: a reply means the primary
// applied a write, not that a replica has it, and a failover then loses it
// (spec 000 §Safety theorems T1/T2 rest on a store that does not). WAIT
// numreplicas timeout blocks until that many replicas acknowledged every
// write the connection made before it (Valkey's per-client write offset) and
// answers how many did; it is not consensus (a replica that acknowledged may
// still not be the one promoted), which is why the rows judge it under
// failovers rather than assume it.
//
// Both backends' pools implement it; a wrapper Pool that does not is refused
// by RunScriptWait with ErrBadOptions.
type Waiter interface {
	// DoWait sends cmds and then WAIT replicas timeout in one pipeline on
	// one connection: the node of the first command's first key (ModeCluster)
	// or the primary (ModeSingle, ModeSentinel). Every command must route to
	// that node; DoWait follows no MOVED or ASK (a redirect means the command
	// did not run: its reply is the *ServerError, and the slot map is
	// reloaded for the next call). replies[i] is cmds[i]'s
	// reply, a *ServerError element when the server refused it; acked is
	// WAIT's answer. err is set when the round trip failed (the outcome of
	// every command is then unknown) or WAIT itself was refused.
	DoWait(ctx context.Context, replicas int, timeout time.Duration, cmds ...Cmd) (replies []any, acked int64, err error)
}

// ErrNotReplicated is the error of a write that the primary applied but
// fewer replicas than asked acknowledged within the WAIT timeout: the caller
// must treat its outcome as unknown (it may be lost at the next failover, or
// survive), never as done.
var ErrNotReplicated = errors.New("write not acknowledged by enough replicas")

func waitCmd(replicas int, timeout time.Duration) []string {
	return []string{"WAIT", strconv.Itoa(replicas), strconv.FormatInt(timeout.Milliseconds(), 10)}
}

func (p *goRedisPool) DoWait(ctx context.Context, replicas int, timeout time.Duration, cmds ...Cmd) ([]any, int64, error) {
	replies, acked, err := p.doWait(ctx, replicas, timeout, cmds...)
	p.goRedisStale(ctx, replies, err)
	return replies, acked, err
}

func (p *goRedisPool) doWait(ctx context.Context, replicas int, timeout time.Duration, cmds ...Cmd) ([]any, int64, error) {
	if len(cmds) == 0 {
		return nil, 0, fmt.Errorf("DoWait without a command: %w", ErrBadOptions)
	}
	for _, c := range cmds {
		if err := c.validate(); err != nil {
			return nil, 0, err
		}
	}
	var node redis.Cmdable = p.c
	if cc, ok := p.c.(*redis.ClusterClient); ok {
		if len(cmds[0].Keys) == 0 {
			return nil, 0, fmt.Errorf("DoWait on a cluster needs a keyed first command: %w", ErrBadOptions)
		}
		n, err := cc.MasterForKey(ctx, cmds[0].Keys[0])
		if err != nil {
			return nil, 0, goRedisErr(err)
		}
		node = n
	}
	pipe := node.Pipeline()
	sent := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		flat := c.flatten()
		args := make([]any, len(flat))
		for j, a := range flat {
			args[j] = a
		}
		sent[i] = redis.NewCmd(ctx, args...)
		// Never re-sent by go-redis: a pipeline whose replies did not come
		// may well have run (see noRetryCmd).
		_ = pipe.Process(ctx, noRetryCmd{sent[i]})
	}
	w := waitCmd(replicas, timeout)
	wait := redis.NewIntCmd(ctx, w[0], w[1], w[2])
	_ = pipe.Process(ctx, wait)
	_, _ = pipe.Exec(ctx)
	replies := make([]any, len(cmds))
	for i, c := range sent {
		v, err := c.Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			var re redis.Error
			if !errors.As(err, &re) {
				return nil, 0, err // the round trip failed: every outcome unknown
			}
			replies[i] = goRedisErr(err)
		default:
			replies[i] = normalise(v, goRedisNested)
		}
	}
	acked, err := wait.Result()
	if err != nil {
		return replies, 0, goRedisErr(err)
	}
	return replies, acked, nil
}

// goRedisStale reloads a cluster client's slot map after DoWait met a
// redirect or lost its node: DoWait's node pipeline bypasses
// ClusterClient.process, the only place go-redis reacts to either, so
// without it every later DoWait would go to the stale node until the
// periodic reload.
func (p *goRedisPool) goRedisStale(ctx context.Context, replies []any, err error) {
	cc, ok := p.c.(*redis.ClusterClient)
	if !ok {
		return
	}
	stale := err != nil && KindOf(goRedisErr(err)) == ""
	for _, r := range replies {
		if e, ok := r.(*ServerError); ok && (e.Kind == KindMoved || e.Kind == KindAsk) {
			stale = true
		}
	}
	if stale {
		cc.ReloadState(ctx)
	}
}

func (p *valkeyGoPool) DoWait(ctx context.Context, replicas int, timeout time.Duration, cmds ...Cmd) ([]any, int64, error) {
	if len(cmds) == 0 {
		return nil, 0, fmt.Errorf("DoWait without a command: %w", ErrBadOptions)
	}
	multi := make(valkey.Commands, 0, len(cmds)+1)
	for _, c := range cmds {
		if err := c.validate(); err != nil {
			return nil, 0, err
		}
		built, err := p.build(c)
		if err != nil {
			return nil, 0, err
		}
		multi = append(multi, built)
	}
	// On a dedicated connection: the batch is written on one wire that no
	// other caller shares, so a WAIT that blocks for its timeout holds up
	// nobody else (on the shared pipelined wire it would stall every other
	// command of the node behind it), and a dedicated cluster client
	// follows no MOVED or ASK (a client-level DoMulti re-sends a redirected
	// command to the new owner on another connection, where this WAIT
	// would not count it); a redirect still refreshes the slot map. WAIT
	// has no key: it goes with the keyed commands (chooseSlot).
	w := waitCmd(replicas, timeout)
	multi = append(multi, p.c.B().Arbitrary(w...).Build())
	var results []valkey.ValkeyResult
	_ = p.c.Dedicated(func(dc valkey.DedicatedClient) error {
		//slotgate:same-slot DoWait's contract: every command routes to the first one's node (RunScriptWait's barrier keeps the script's first key's hash tag, fencing.BarrierKey) and WAIT has no key
		results = dc.DoMulti(ctx, multi...)
		return nil
	})
	replies := make([]any, len(cmds))
	for i := range cmds {
		msg, err := results[i].ToMessage()
		switch {
		case valkey.IsValkeyNil(err):
		case err != nil:
			if _, ok := valkey.IsValkeyErr(err); !ok {
				return nil, 0, err
			}
			replies[i] = ParseServerError(valkeyGoErrorText(&msg))
		default:
			v, err := valkeyGoReply(&msg)
			if err != nil {
				return nil, 0, err
			}
			replies[i] = v
		}
	}
	acked, err := results[len(cmds)].AsInt64()
	if err != nil {
		return replies, 0, valkeyGoErr(err)
	}
	return replies, acked, nil
}

// RunScriptWait is RunScript in durability mode: the script, then a barrier
// write, then WAIT replicas timeout, on one connection (Waiter). The barrier
// (SET barrierKey 1 PX …) is what makes WAIT cover what the script only
// read: WAIT waits for the connection's last propagated write, and a script
// that wrote nothing propagates nothing, so without it a read of another
// client's not-yet-replicated write would be confirmed. barrierKey must
// share the script keys' slot. A reply acknowledged by fewer than replicas
// replicas is returned with an error wrapping ErrNotReplicated: an unknown
// outcome.
func RunScriptWait(ctx context.Context, p Pool, s *Script, keys []string, barrierKey string, replicas int, timeout time.Duration, args ...string) (reply any, fellBack bool, err error) {
	w, ok := p.(Waiter)
	if !ok {
		return nil, false, fmt.Errorf("pool %T cannot WAIT on the script's connection: %w", p, ErrBadOptions)
	}
	numKeys := strconv.Itoa(len(keys))
	barrier := Cmd{Prefix: []string{"SET"}, Keys: []string{barrierKey}, Args: []string{"1", "PX", strconv.FormatInt(barrierTTL.Milliseconds(), 10)}}
	s.Stats.EvalSHA.Add(1)
	script := Cmd{Prefix: []string{"EVALSHA", s.SHA1, numKeys}, Keys: keys, Args: args}
	replies, acked, err := doWaitFollowing(ctx, w, replicas, timeout, script, barrier)
	if err == nil && IsNoScript(asError(replies[0])) {
		s.Stats.NoScriptFallbacks.Add(1)
		fellBack = true
		script.Prefix = []string{"EVAL", s.Source, numKeys}
		replies, acked, err = doWaitFollowing(ctx, w, replicas, timeout, script, barrier)
	}
	if err != nil {
		return nil, fellBack, err
	}
	if e := asError(replies[0]); e != nil {
		// The script's own error reply: refused before it ran (MOVED,
		// READONLY, CROSSSLOT), or a runtime error, after which what it
		// wrote stays unconfirmed like any reply's.
		return nil, fellBack, e
	}
	if e := asError(replies[1]); e != nil {
		return nil, fellBack, fmt.Errorf("durability barrier: %w", e)
	}
	if acked < int64(replicas) {
		return replies[0], fellBack, fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, acked, replicas, timeout)
	}
	return replies[0], fellBack, nil
}

// doWaitFollowing is DoWait that follows a MOVED: a batch whose first
// command was redirected ran nothing (the barrier shares its slot, and the
// WAIT then fails on a replica or counts nothing), so it is sent again once
// the slot map has had time to reload (DoWait reloads it) — up to
// redirectRetries times, redirectBackoff apart. Right after a failover the
// client's map still names the demoted primary for a moment; without this
// every durable call of that moment fails although none of them ran.
func doWaitFollowing(ctx context.Context, w Waiter, replicas int, timeout time.Duration, cmds ...Cmd) ([]any, int64, error) {
	for attempt := 1; ; attempt++ {
		replies, acked, err := w.DoWait(ctx, replicas, timeout, cmds...)
		moved := len(replies) > 0 && KindOf(asError(replies[0])) == KindMoved
		if !moved || attempt > redirectRetries {
			return replies, acked, err
		}
		select {
		case <-ctx.Done():
			return replies, acked, err
		case <-time.After(time.Duration(attempt) * redirectBackoff):
		}
	}
}

// redirectRetries and redirectBackoff bound doWaitFollowing: about 1.5 s
// in all, longer than either client takes to reload its map after a MOVED.
const (
	redirectRetries = 5
	redirectBackoff = 100 * time.Millisecond
)

// barrierTTL keeps RunScriptWait's barrier keys from piling up.
const barrierTTL = time.Minute

func asError(v any) error {
	if e, ok := v.(*ServerError); ok {
		return e
	}
	return nil
}
