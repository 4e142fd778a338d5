package marconi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// ExpiredChannel is the keyevent channel of expired keys in database 0
// (Valkey keyspace notifications; cluster mode has database 0 only).
const ExpiredChannel = "__keyevent@0__:expired"

// NotifyOptions configures the keyspace-notification listener that feeds
// on_session_expired (spec 002 §5 KeyspaceReaper) under ExpiryKeyspace — an
// option, not the default: it is a pubsub subscriber on every node and
// rewrites their config, which Stage 2's "No pubsub subscriber anywhere"
// rules out (ExpiryMode explains the decision). On a cluster, keyspace
// notifications are node-local — a key's expiry is announced only by the
// primary that owns its slot — so the listener holds one subscription
// connection per primary (the subscription side of the client seam, in
// ModeSingle), never one cluster-wide subscriber. Which nodes are primaries
// changes with every failover, so on a cluster the listener rediscovers
// them (CLUSTER NODES through the mesh's pool) every Rediscover and on any
// dropped subscription, configuring and subscribing to each new one.
type NotifyOptions struct {
	Backend  client.Backend
	Protocol client.Protocol
	// Addrs are the primaries' addresses on a deployment without cluster
	// support (the one server's on a standalone one); on a cluster the
	// listener discovers them and Addrs may be empty.
	Addrs []string
	// Configure sets notify-keyspace-events to include "Ex" (CONFIG GET,
	// add the flags, CONFIG SET) on every node — replicas too, so that a
	// promoted replica announces expiries from its first second as
	// primary; without it the servers must be configured already.
	Configure bool
	// ClientName names the subscription connections (CLIENT SETNAME).
	ClientName string
	// Rediscover is how often the listener re-reads the cluster's
	// primaries (default DefaultRediscover).
	Rediscover time.Duration
}

// DefaultRediscover bounds how long a promoted primary's expiries go
// unheard after a failover the listener was not told about.
const DefaultRediscover = time.Second

// expiryListener holds one subscription per current primary. With a
// discovery pool it keeps that set current (refresh); the static mutant
// and a deployment without cluster support keep the set found at start.
type expiryListener struct {
	o         NotifyOptions
	m         *Mesh
	discovery client.Pool // nil: static set (no cluster, or the mutant)

	mu         sync.Mutex
	subs       map[string]client.Subscriber // by primary address
	configured map[string]bool

	wake   chan struct{} // a dropped subscription asks for a refresh now
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startExpiryListener(ctx context.Context, o NotifyOptions, m *Mesh) (*expiryListener, error) {
	if o.Rediscover <= 0 {
		o.Rediscover = DefaultRediscover
	}
	l := &expiryListener{o: o, m: m, subs: map[string]client.Subscriber{}, configured: map[string]bool{}, wake: make(chan struct{}, 1)}
	primaries, nodes := o.Addrs, o.Addrs
	if m.opts.Pool != nil {
		p, all, err := ClusterNodes(ctx, m.opts.Pool)
		switch {
		case err == nil:
			primaries, nodes = p, all
			if m.opts.Mutant == MutantStaticListener {
				nodes = primaries // the old listener: primaries only, once
			} else {
				l.discovery = m.opts.Pool
			}
		case !errors.Is(err, ErrNotCluster):
			return nil, fmt.Errorf("keyspace listener: discover primaries: %w", err)
		}
	}
	if len(primaries) == 0 {
		return nil, fmt.Errorf("keyspace listener: %w: no primary addresses", ErrBadOptions)
	}
	if o.Configure {
		for _, addr := range nodes {
			if err := enableExpiredEvents(ctx, l.options(addr)); err != nil {
				return nil, fmt.Errorf("keyspace listener on %s: %w", addr, err)
			}
			l.configured[addr] = true
		}
	}
	for _, addr := range primaries {
		if err := l.subscribe(ctx, addr); err != nil {
			_ = l.close()
			return nil, err
		}
	}
	bg, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	if l.discovery != nil {
		l.wg.Add(1)
		go l.rediscover(bg)
	}
	return l, nil
}

func (l *expiryListener) options(addr string) client.Options {
	return client.Options{Backend: l.o.Backend, Mode: client.ModeSingle, Protocol: l.o.Protocol, Addrs: []string{addr}, ClientName: l.o.ClientName}
}

// subscribe opens addr's subscription and starts its reader.
func (l *expiryListener) subscribe(ctx context.Context, addr string) error {
	sub, err := client.NewSubscriber(ctx, l.options(addr))
	if err != nil {
		return fmt.Errorf("keyspace listener on %s: %w", addr, err)
	}
	if err := sub.Subscribe(ctx, ExpiredChannel); err != nil {
		_ = sub.Close()
		return fmt.Errorf("keyspace listener on %s: subscribe: %w", addr, err)
	}
	l.mu.Lock()
	l.subs[addr] = sub
	l.mu.Unlock()
	l.wg.Add(1)
	go l.run(addr, sub)
	return nil
}

// rediscover refreshes the subscriptions every Rediscover, and at once
// when a subscription was dropped.
func (l *expiryListener) rediscover(ctx context.Context) {
	defer l.wg.Done()
	tick := time.NewTicker(l.o.Rediscover)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-l.wake:
		}
		if err := l.refresh(ctx); err != nil && ctx.Err() == nil {
			l.m.m.expiryListenErrs.Inc()
			l.m.opts.Logf("marconi: keyspace listener: %v", err)
		}
	}
}

// refresh makes the subscriptions match the cluster's current primaries:
// every node not yet configured gets "Ex", every new primary a
// subscription; a node that is no longer a primary announces nothing and
// its subscription closes. What fails is retried on the next refresh.
func (l *expiryListener) refresh(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, l.o.Rediscover)
	defer cancel()
	primaries, nodes, err := ClusterNodes(cctx, l.discovery)
	if err != nil {
		return fmt.Errorf("rediscover: %w", err)
	}
	var errs []error
	if l.o.Configure {
		for _, addr := range nodes {
			if l.configured[addr] {
				continue
			}
			if err := enableExpiredEvents(cctx, l.options(addr)); err != nil {
				errs = append(errs, fmt.Errorf("on %s: %w", addr, err))
				continue
			}
			l.configured[addr] = true
		}
	}
	want := map[string]bool{}
	for _, addr := range primaries {
		want[addr] = true
		l.mu.Lock()
		_, ok := l.subs[addr]
		l.mu.Unlock()
		if !ok {
			if err := l.subscribe(cctx, addr); err != nil {
				errs = append(errs, err)
			}
		}
	}
	l.mu.Lock()
	for addr, sub := range l.subs {
		if !want[addr] {
			delete(l.subs, addr)
			_ = sub.Close()
		}
	}
	l.mu.Unlock()
	return errors.Join(errs...)
}

// ExpiryListenerAddrs lists the nodes whose expiries the keyspace listener
// is subscribed to, sorted (nil without a listener).
func (m *Mesh) ExpiryListenerAddrs() []string {
	if m.listener == nil {
		return nil
	}
	return m.listener.primaries()
}

// primaries lists the addresses the listener is subscribed to, sorted.
func (l *expiryListener) primaries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.subs))
	for addr := range l.subs {
		out = append(out, addr)
	}
	sort.Strings(out)
	return out
}

// run turns expired session records into on_session_expired calls. The
// project comes from the registration table (the key carries tenant and
// session id only); a session this instance does not hold is ignored by
// the hook. A dropped subscription is closed and forgotten, and a refresh
// asked for, which resubscribes if addr is still a primary.
func (l *expiryListener) run(addr string, sub client.Subscriber) {
	defer l.wg.Done()
	m := l.m
	for msg := range sub.Messages() {
		if msg.Kind != client.MsgMessage {
			if msg.Kind == client.MsgDropped {
				m.m.expiryListenErrs.Inc()
				m.opts.Logf("marconi: keyspace listener: subscription on %s dropped: %s", addr, msg.Payload)
				if l.discovery != nil {
					l.mu.Lock()
					if l.subs[addr] == sub {
						delete(l.subs, addr)
						go func() { _ = sub.Close() }() // Close waits for this reader's channel
					}
					l.mu.Unlock()
					select {
					case l.wake <- struct{}{}:
					default:
					}
				}
			}
			continue
		}
		tenant, sid, ok := m.store.ParseRecordKey(msg.Payload)
		if !ok {
			continue // another key expired
		}
		m.t.mu.RLock()
		project := ""
		if reg := m.t.regs[sid]; reg != nil {
			project = reg.s.Project
		}
		m.t.mu.RUnlock()
		_ = m.inv.OnSessionExpired(tenant, project, sid)
	}
}

func (l *expiryListener) close() error {
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Lock()
	subs := l.subs
	l.subs = map[string]client.Subscriber{}
	l.mu.Unlock()
	var errs []error
	for _, s := range subs {
		errs = append(errs, s.Close())
	}
	l.wg.Wait()
	return errors.Join(errs...)
}

// enableExpiredEvents adds "E" (keyevent channels) and "x" (expired
// events) to the node's notify-keyspace-events, keeping what is there.
func enableExpiredEvents(ctx context.Context, co client.Options) error {
	pool, err := client.NewPool(ctx, co)
	if err != nil {
		return err
	}
	defer pool.Close()
	reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CONFIG", "GET", "notify-keyspace-events"}})
	if err != nil {
		return fmt.Errorf("config get notify-keyspace-events: %w", err)
	}
	current := ""
	switch v := reply.(type) {
	case []any:
		if len(v) == 2 {
			current, _ = client.AsString(v[1])
		}
	case map[string]any:
		current, _ = client.AsString(v["notify-keyspace-events"])
	}
	want := current
	for _, f := range "Ex" {
		if !strings.ContainsRune(want, f) && !(f == 'x' && strings.ContainsRune(want, 'A')) {
			want += string(f)
		}
	}
	if want == current {
		return nil
	}
	if _, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CONFIG", "SET", "notify-keyspace-events", want}}); err != nil {
		return fmt.Errorf("config set notify-keyspace-events %s: %w", want, err)
	}
	return nil
}

// ErrNotCluster is returned by PrimaryAddrs on a server without cluster
// support: its own address is the only one.
var ErrNotCluster = errors.New("server is not in cluster mode")

// PrimaryAddrs lists every primary that serves slots, from CLUSTER NODES
// (any node knows the whole cluster), as the announced host:port.
func PrimaryAddrs(ctx context.Context, pool client.Pool) ([]string, error) {
	primaries, _, err := ClusterNodes(ctx, pool)
	return primaries, err
}

// ClusterNodes reads CLUSTER NODES: the primaries that serve slots, and
// every reachable node (primaries and replicas), each sorted.
func ClusterNodes(ctx context.Context, pool client.Pool) (primaries, nodes []string, err error) {
	reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "NODES"}})
	if err != nil {
		if client.KindOf(err) != "" {
			return nil, nil, fmt.Errorf("cluster nodes: %w: %w", ErrNotCluster, err)
		}
		return nil, nil, fmt.Errorf("cluster nodes: %w", err)
	}
	text, err := client.AsString(reply)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster nodes: %w", err)
	}
	primaries, nodes = parseClusterNodes(text)
	return primaries, nodes, nil
}

// parseClusterNodes reads CLUSTER NODES lines: "<id> <ip:port@cport[,host]>
// <flags> <master> <ping> <pong> <epoch> <link> <slot>...". A primary
// counts when it serves slots; any node counts unless failed or without an
// address.
func parseClusterNodes(text string) (primaries, nodes []string) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		flags := "," + f[2] + ","
		if strings.Contains(flags, ",fail,") || strings.Contains(flags, ",noaddr,") || strings.Contains(flags, ",handshake,") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		nodes = append(nodes, addr)
		if len(f) >= 9 && strings.Contains(flags, ",master,") && f[7] == "connected" {
			primaries = append(primaries, addr)
		}
	}
	sort.Strings(primaries)
	sort.Strings(nodes)
	return primaries, nodes
}
