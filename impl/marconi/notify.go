package marconi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/slotgate/slotgate/impl/client"
)

// ExpiredChannel is the keyevent channel of expired keys in database 0
// (Valkey keyspace notifications; cluster mode has database 0 only).
const ExpiredChannel = "__keyevent@0__:expired"

// NotifyOptions configures the keyspace-notification listener that feeds
// on_session_expired (spec 002 §5 KeyspaceReaper). On a cluster, keyspace
// notifications are node-local — a key's expiry is announced only by the
// primary that owns its slot — so the listener holds one subscription
// connection per primary (the subscription side of the client seam, in
// ModeSingle), never one cluster-wide subscriber.
type NotifyOptions struct {
	Backend  client.Backend
	Protocol client.Protocol
	// Addrs are every primary's address (PrimaryAddrs discovers them), or
	// the one server's on a standalone deployment.
	Addrs []string
	// Configure sets notify-keyspace-events to include "Ex" on every
	// primary (CONFIG GET, add the flags, CONFIG SET); without it the
	// servers must be configured already.
	Configure bool
	// ClientName names the subscription connections (CLIENT SETNAME).
	ClientName string
}

type expiryListener struct {
	subs []client.Subscriber
	wg   sync.WaitGroup
}

func startExpiryListener(ctx context.Context, o NotifyOptions, m *Mesh) (*expiryListener, error) {
	if len(o.Addrs) == 0 {
		return nil, fmt.Errorf("keyspace listener: %w: no primary addresses", ErrBadOptions)
	}
	l := &expiryListener{}
	for _, addr := range o.Addrs {
		co := client.Options{Backend: o.Backend, Mode: client.ModeSingle, Protocol: o.Protocol, Addrs: []string{addr}, ClientName: o.ClientName}
		if o.Configure {
			if err := enableExpiredEvents(ctx, co); err != nil {
				_ = l.close()
				return nil, fmt.Errorf("keyspace listener on %s: %w", addr, err)
			}
		}
		sub, err := client.NewSubscriber(ctx, co)
		if err != nil {
			_ = l.close()
			return nil, fmt.Errorf("keyspace listener on %s: %w", addr, err)
		}
		l.subs = append(l.subs, sub)
		if err := sub.Subscribe(ctx, ExpiredChannel); err != nil {
			_ = l.close()
			return nil, fmt.Errorf("keyspace listener on %s: subscribe: %w", addr, err)
		}
		l.wg.Add(1)
		go l.run(sub, m)
	}
	return l, nil
}

// run turns expired session records into on_session_expired calls. The
// project comes from the registration table (the key carries tenant and
// session id only); a session this instance does not hold is ignored by
// the hook.
func (l *expiryListener) run(sub client.Subscriber, m *Mesh) {
	defer l.wg.Done()
	for msg := range sub.Messages() {
		if msg.Kind != client.MsgMessage {
			if msg.Kind == client.MsgDropped {
				m.m.expiryListenErrs.Inc()
				m.opts.Logf("marconi: keyspace listener: subscription dropped: %s", msg.Payload)
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
	var errs []error
	for _, s := range l.subs {
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
	reply, err := pool.Do(ctx, client.Cmd{Prefix: []string{"CLUSTER", "NODES"}})
	if err != nil {
		if client.KindOf(err) != "" {
			return nil, fmt.Errorf("cluster nodes: %w: %w", ErrNotCluster, err)
		}
		return nil, fmt.Errorf("cluster nodes: %w", err)
	}
	text, err := client.AsString(reply)
	if err != nil {
		return nil, fmt.Errorf("cluster nodes: %w", err)
	}
	return parsePrimaries(text), nil
}

// parsePrimaries reads CLUSTER NODES lines: "<id> <ip:port@cport[,host]>
// <flags> <master> <ping> <pong> <epoch> <link> <slot>...".
func parsePrimaries(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 {
			continue // no slots: not serving
		}
		flags := "," + f[2] + ","
		if !strings.Contains(flags, ",master,") || strings.Contains(flags, ",fail,") || strings.Contains(flags, ",noaddr,") || f[7] != "connected" {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		out = append(out, addr)
	}
	sort.Strings(out)
	return out
}
