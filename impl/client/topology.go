package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Spec 000 §Client Architecture: "a dead primary halts dispatch pending
// topology refresh" — the residual failure mode. impl bounds that halt
// (failure-drills gates it against a budget) by refreshing the slot map as
// soon as a node stops answering, and by refreshing replica-read pools
// periodically so a repaired replica gets its reads back.
//
// go-redis v9.23.0, as read in osscluster.go: ClusterClient.process sends a
// keyed write to state.slotMasterNode — always the slot's first node, failing
// or not — and retries a network error once on the same node and then on
// "another" node, which for a write is the same dead primary again. The slot
// map is reloaded (clusterStateHolder.LazyReload) only on MOVED/ASK, on a
// READONLY reply, or when the state is older than ClusterStateReloadInterval
// (60 s). So after a primary is SIGKILLed the pool keeps dialing it until
// then: kill-failover halt median 35.8 s over 5 drills (full profile). The
// public ClusterClient.ReloadState is LazyReload: one background CLUSTER
// SLOTS from a random reachable node (loadState skips nodes that refuse),
// coalesced while one runs and followed by a 200 ms cool-down in which
// further requests collapse into one more reload. reloadOnNodeFailure calls
// it from a hook on every node client whenever a command or dial on that node
// fails without a server reply — refused, reset, EOF, or timed out — at most
// once per reloadEvery. Reloads made before the cluster promoted the replica
// still name the dead node; the failures continue and so do the reloads, and
// the first one after the promotion moves the shard's traffic to the new
// primary.
//
// valkey-go v1.0.79 refreshes its slot map itself on a connection error
// (cluster.go: a closed conn's hook and shouldRefreshRetry call
// lazyRefresh), so only its replica-read pools need help: see replicaRefresh.

// reloadEvery rate-limits reloadOnNodeFailure: at most one ReloadState per
// pool per interval (go-redis's own cool-down is 200 ms).
const reloadEvery = 200 * time.Millisecond

// replicaRefresh is the periodic topology refresh of a replica-read pool
// (go-redis ClusterStateReloadInterval and FailingTimeoutSeconds, valkey-go
// ShardsRefreshInterval). NOTE: a replica that died and came back is left
// out of the slot map while the cluster had it FAIL and until its
// replication offset is non-zero (CLUSTER SLOTS); neither library refreshes
// again without an error or a redirect (go-redis every 60 s), and go-redis
// skips a node it marked failing for 15 s. Measured: neither backend sent a
// read to a restarted replica within 1.5 s (smoke) / 3 s (full). One CLUSTER
// SLOTS a second per replica-read pool is the price; command pools without
// replica reads are not refreshed periodically (commandstats stays theirs).
const replicaRefresh = time.Second

// reloadOnNodeFailure makes c reload its slot map when a node fails without
// a reply (see above).
func reloadOnNodeFailure(c *redis.ClusterClient) {
	h := &nodeFailureHook{reload: func() { c.ReloadState(context.Background()) }}
	c.OnNewNode(func(n *redis.Client) { n.AddHook(h) })
}

// staticSlots is the ClusterOptions.ClusterSlots of a StaticSlotMap client:
// the first call asks the seeds for CLUSTER SLOTS, one after another until
// one answers, and every later call returns that answer. go-redis calls it
// in place of its own CLUSTER SLOTS (loadState in osscluster.go, the same in
// v9.7 through v9.23) on every reload, so the client's slot map never
// changes; MOVED and ASK are still followed per command, by the address in
// the reply. A first call that finds no seed answering returns the error,
// and the next call asks again.
func staticSlots(o Options) func(context.Context) ([]redis.ClusterSlot, error) {
	var (
		mu    sync.Mutex
		slots []redis.ClusterSlot
	)
	return func(ctx context.Context) ([]redis.ClusterSlot, error) {
		mu.Lock()
		defer mu.Unlock()
		if slots != nil {
			return slots, nil
		}
		var errs []error
		for _, addr := range o.Addrs {
			so := goRedisOptions(o)
			so.Addr, so.Dialer = addr, goRedisDialer(o)
			c := redis.NewClient(so)
			s, err := c.ClusterSlots(ctx).Result()
			_ = c.Close()
			if err == nil {
				slots = s
				return slots, nil
			}
			errs = append(errs, fmt.Errorf("cluster slots from %s: %w", addr, err))
		}
		return nil, errors.Join(errs...)
	}
}

// nodeFailureHook is a go-redis hook on every node client of one
// ClusterClient.
type nodeFailureHook struct {
	reload func()
	last   atomic.Int64 // unix nanos of the last reload requested
}

func (h *nodeFailureHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		h.observe(err)
		return conn, err
	}
}

func (h *nodeFailureHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.observe(err)
		return err
	}
}

func (h *nodeFailureHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.observe(err)
		return err
	}
}

// observe requests a reload for a node failure, rate-limited.
func (h *nodeFailureHook) observe(err error) {
	if !nodeFailure(err) {
		return
	}
	now := time.Now().UnixNano()
	last := h.last.Load()
	if now-last < int64(reloadEvery) || !h.last.CompareAndSwap(last, now) {
		return
	}
	h.reload()
}

// nodeFailure says err is a node that did not answer: a network error
// (refused, reset, unreachable, an i/o timeout), EOF, or a deadline that ran
// out while waiting for it — not a server reply, not redis.Nil, not a caller
// that gave up.
func nodeFailure(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, context.DeadlineExceeded)
}

// SlotMapNodes lists the nodes p's slot map routes to now, as the cluster
// announced them (host:port), when the client library lets that be read:
// valkey-go's Client.Nodes is the node set of its last topology refresh (a
// replica CLUSTER SHARDS reports not online is left out); go-redis keeps its
// cluster state private, so ok is false there. The failure drills use it to
// confirm a premise, never to route.
func SlotMapNodes(p Pool) (addrs []string, ok bool) {
	v, isValkeyGo := p.(*valkeyGoPool)
	if !isValkeyGo {
		return nil, false
	}
	for addr := range v.c.Nodes() {
		addrs = append(addrs, addr)
	}
	slices.Sort(addrs)
	return addrs, true
}
