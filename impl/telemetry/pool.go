package telemetry

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
)

// DefaultRefresh bounds how stale the slot map may get: the client library
// follows most MOVED replies itself, so a moved slot is noticed by reading
// the map again, at most this often (and at once on a MOVED the seam sees).
const DefaultRefresh = time.Second

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Node, when set, is the one node every command goes to: a
	// client.ModeSingle pool. Without it the pool is cluster-aware and its
	// commands are attributed through the slot map.
	Node string
	// RefreshEvery bounds the slot map's age; zero means DefaultRefresh.
	RefreshEvery time.Duration
}

// Pool is a client.Pool that records every command in Metrics.
type Pool struct {
	client.Pool
	m *Metrics
	o PoolOptions

	mu        sync.RWMutex
	owners    []string // slot → owner address; nil in single mode
	refreshed time.Time
	busy      atomic.Bool // one refresh at a time
}

// WrapPool instruments p. A cluster-aware pool reads its slot map first, so
// the first command is attributed already.
func WrapPool(ctx context.Context, p client.Pool, m *Metrics, o PoolOptions) (*Pool, error) {
	if o.RefreshEvery <= 0 {
		o.RefreshEvery = DefaultRefresh
	}
	tp := &Pool{Pool: p, m: m, o: o}
	if o.Node == "" {
		if err := tp.Refresh(ctx); err != nil {
			return nil, err
		}
	}
	return tp, nil
}

// Metrics is the instrument this pool records in.
func (p *Pool) Metrics() *Metrics { return p.m }

// SlotOf is the slot a command on key is attributed to (the mutant's, for
// MutantWholeKeySlot).
func (m *Metrics) SlotOf(key string) int {
	if m.mutant == MutantWholeKeySlot {
		return int(slot.CRC16([]byte(key))) % slot.Count
	}
	return slot.Of(key)
}

// Owner is the node the slot map names for s, or NodeUnknown.
func (p *Pool) Owner(s int) string {
	if p.o.Node != "" {
		return p.o.Node
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if s < 0 || s >= len(p.owners) || p.owners[s] == "" {
		return NodeUnknown
	}
	return p.owners[s]
}

// Do implements client.Pool: it sends cmd and counts it, and its redirect or
// error, against the owner of its first key's slot.
func (p *Pool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	v, err := p.Pool.Do(ctx, cmd)
	if len(cmd.Prefix) == 0 {
		return v, err
	}
	name := commandName(cmd)
	if len(cmd.Keys) == 0 {
		p.m.keyless.WithLabelValues(name).Inc()
		return v, err
	}
	s := p.m.SlotOf(cmd.Keys[0])
	node, slotLabel := p.Owner(s), strconv.Itoa(s)
	p.m.commands.WithLabelValues(node, slotLabel, name).Inc()
	switch kind := client.KindOf(err); {
	case err == nil:
	case kind == client.KindMoved || kind == client.KindAsk || kind == client.KindTryAgain:
		target := TargetNone
		if movedSlot, addr, ok := ParseRedirect(err.Error()); ok {
			target = addr
			if kind == client.KindMoved {
				p.setOwner(movedSlot, addr)
			}
		}
		p.m.redirects.WithLabelValues(node, slotLabel, name, string(kind), target).Inc()
	case client.IsRefused(err):
		// Refused by the client library before sending: the server never
		// saw it, so it is no node's error.
		p.m.errors.WithLabelValues(node, slotLabel, name, "refused-"+string(kind)).Inc()
	case kind != "":
		p.m.errors.WithLabelValues(node, slotLabel, name, string(kind)).Inc()
	default:
		p.m.errors.WithLabelValues(node, slotLabel, name, KindNetwork).Inc()
	}
	p.maybeRefresh(ctx)
	return v, err
}

// commandName is the lowercase command name, as INFO commandstats names it.
func commandName(cmd client.Cmd) string { return strings.ToLower(cmd.Prefix[0]) }

// ParseRedirect reads "MOVED <slot> <host:port>" or "ASK <slot> <host:port>".
func ParseRedirect(msg string) (s int, addr string, ok bool) {
	f := strings.Fields(msg)
	if len(f) < 3 || (f[0] != string(client.KindMoved) && f[0] != string(client.KindAsk)) {
		return 0, "", false
	}
	s, err := strconv.Atoi(f[1])
	if err != nil || s < 0 || s >= slot.Count {
		return 0, "", false
	}
	if _, _, err := net.SplitHostPort(f[2]); err != nil {
		return 0, "", false
	}
	return s, f[2], true
}

func (p *Pool) setOwner(s int, addr string) {
	if p.o.Node != "" {
		return
	}
	p.mu.Lock()
	if s < len(p.owners) {
		p.owners[s] = addr
	}
	p.mu.Unlock()
}

// maybeRefresh reads the slot map again once it is RefreshEvery old; one
// caller does, the others go on with the old map.
func (p *Pool) maybeRefresh(ctx context.Context) {
	if p.o.Node != "" {
		return
	}
	p.mu.RLock()
	due := time.Since(p.refreshed) >= p.o.RefreshEvery
	p.mu.RUnlock()
	if !due || !p.busy.CompareAndSwap(false, true) {
		return
	}
	defer p.busy.Store(false)
	if ctx.Err() != nil {
		return
	}
	_ = p.Refresh(ctx) // counted in SlotMapRefreshesName; the old map stays
}

// Refresh reads the slot map with CLUSTER SLOTS through the pool.
func (p *Pool) Refresh(ctx context.Context) error {
	reply, err := p.Pool.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "SLOTS"}})
	if err == nil {
		var owners []string
		if owners, err = ParseClusterSlots(reply); err == nil {
			p.mu.Lock()
			p.owners, p.refreshed = owners, time.Now()
			p.mu.Unlock()
			p.m.refreshes.WithLabelValues("ok").Inc()
			return nil
		}
	}
	p.m.refreshes.WithLabelValues("error").Inc()
	p.mu.Lock()
	p.refreshed = time.Now() // retry after RefreshEvery, not on every command
	p.mu.Unlock()
	return fmt.Errorf("read slot map: %w", err)
}

// ParseClusterSlots turns a CLUSTER SLOTS reply (normalised by impl/client)
// into the owner address ("ip:port") of every slot; unserved slots are "".
func ParseClusterSlots(reply any) ([]string, error) {
	ranges, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("cluster slots: unexpected reply %T", reply)
	}
	owners := make([]string, slot.Count)
	for _, r := range ranges {
		e, ok := r.([]any)
		if !ok || len(e) < 3 {
			return nil, fmt.Errorf("cluster slots: unexpected range %v", r)
		}
		lo, err1 := client.AsInt64(e[0])
		hi, err2 := client.AsInt64(e[1])
		primary, ok := e[2].([]any)
		if err1 != nil || err2 != nil || !ok || len(primary) < 2 || lo < 0 || hi >= slot.Count || lo > hi {
			return nil, fmt.Errorf("cluster slots: unexpected range %v", r)
		}
		host, err3 := client.AsString(primary[0])
		port, err4 := client.AsInt64(primary[1])
		if err3 != nil || err4 != nil {
			return nil, fmt.Errorf("cluster slots: unexpected node %v", primary)
		}
		addr := net.JoinHostPort(host, strconv.FormatInt(port, 10))
		for s := lo; s <= hi; s++ {
			owners[s] = addr
		}
	}
	return owners, nil
}
