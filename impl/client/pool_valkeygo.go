package client

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// valkeyGoPool is the Pool over github.com/valkey-io/valkey-go.
//
// Routing, as read in valkey-go v1.0.79:
//   - Do builds B().Arbitrary(Prefix...).Keys(Keys...).Args(Args...): the
//     slot is the first key's (internal/cmds/builder.go Arbitrary.Keys). On a
//     cluster client the builder starts at InitSlot and check()s every
//     further key, panicking with "multi key command with different key
//     slots are not allowed" (internal/cmds/cmds.go) before anything is
//     sent. Do recovers exactly that panic into a *RefusedError of
//     KindCrossSlot. A single client's builder starts at NoSlot and checks
//     nothing, so there the server decides.
//   - A command with no Keys is sent to an arbitrary node (InitSlot).
//   - clusterClient.do (cluster.go) follows MOVED and ASK (ASKING + cmd in
//     one DoMulti) without limit unless ClusterOption.MaxMovedRedirections
//     is set, refreshing the slot map lazily; CLUSTERDOWN, TRYAGAIN and
//     LOADING, and network errors, are retried with backoff only for
//     commands marked retryable (Arbitrary is not, unless built ReadOnly),
//     so for Pool.Do they come straight back.
//   - NOSCRIPT is not handled by Do (only valkey.Lua does EVALSHA→EVAL);
//     RunScript does that above both backends.
//   - Arbitrary panics for any command ending in SUBSCRIBE; Cmd.validate
//     refuses those first with ErrBadCommand.
type valkeyGoPool struct {
	c            valkey.Client
	version      string
	replicaReads bool
	// replicas routes replica reads around a failed replica (see
	// replicaRouter); nil without ReplicaReads, or with NaiveReplicaReads.
	replicas *replicaRouter
	call     time.Duration // Options.CallTimeout
}

func newValkeyGoPool(ctx context.Context, o Options) (*valkeyGoPool, error) {
	p := &valkeyGoPool{version: backendVersion(BackendValkeyGo), replicaReads: o.ReplicaReads && o.Mode == ModeCluster, call: o.CallTimeout}
	if p.replicaReads && !o.NaiveReplicaReads {
		p.replicas = newReplicaRouter(replicaCoolDown)
	}
	c, err := newValkeyGoClient(o, p.replicas)
	if err != nil {
		return nil, err
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, fmt.Errorf("ping %v: %w", o.Addrs, valkeyGoErr(err))
	}
	p.c = c
	return p, nil
}

// readOnlyCommands are the commands a ReplicaReads pool marks read-only
// for valkey-go (Arbitrary commands are not, and only read-only commands
// are sent to replicas); go-redis learns the same from COMMAND.
var readOnlyCommands = map[string]bool{
	"GET": true, "MGET": true, "EXISTS": true, "STRLEN": true, "TTL": true, "PTTL": true, "TYPE": true,
	"HGET": true, "HMGET": true, "HGETALL": true, "HLEN": true, "SMEMBERS": true, "SCARD": true,
	"SISMEMBER": true, "ZSCORE": true, "ZRANGE": true, "ZCARD": true, "LRANGE": true, "LLEN": true,
}

// newValkeyGoClient builds a client for o and checks that it is in the mode
// asked for: valkey.NewClient silently falls back to a single client when
// one InitAddress is not a cluster node, which would make a ModeCluster run
// quietly test something else. replicas, when not nil, routes the replica
// reads of a ReplicaReads pool.
func newValkeyGoClient(o Options, replicas *replicaRouter) (valkey.Client, error) {
	c, err := valkey.NewClient(valkeyGoOptions(o, replicas))
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("connect %v: %w", o.Addrs, valkeyGoErr(err))
	}
	if o.Mode == ModeSentinel && c.Mode() != valkey.ClientModeSentinel {
		c.Close()
		return nil, fmt.Errorf("connect %v: not a Sentinel client (client mode %q): %w", o.Addrs, c.Mode(), ErrBadOptions)
	}
	if o.Mode == ModeCluster && c.Mode() != valkey.ClientModeCluster {
		c.Close()
		return nil, fmt.Errorf("connect %v: server is not in cluster mode (client mode %q): %w",
			o.Addrs, c.Mode(), ErrBadOptions)
	}
	return c, nil
}

// valkeyGoOptions maps Options onto valkey.ClientOption. Client-side caching
// is off: slotgate observes the server, not a cache in front of it.
func valkeyGoOptions(o Options, replicas *replicaRouter) valkey.ClientOption {
	co := valkey.ClientOption{
		InitAddress:       o.Addrs,
		ForceSingleClient: o.Mode == ModeSingle,
		AlwaysRESP2:       o.Protocol == RESP2,
		ClientName:        o.ClientName,
		Username:          o.Username,
		Password:          o.Password,
		TLSConfig:         o.TLS,
		Dialer:            net.Dialer{Timeout: o.DialTimeout},
		// ConnWriteTimeout is valkey-go's per-connection read/write
		// deadline (valkey.go ClientOption), the nearest thing to a read
		// timeout.
		ConnWriteTimeout: o.ReadTimeout,
		DisableCache:     true,
		SendToReplicas:   sendToReplicas(o),
	}
	if o.Mode == ModeSentinel {
		co.ForceSingleClient = false
		co.Sentinel = valkey.SentinelOption{MasterSet: o.MasterName, Dialer: co.Dialer, ClientName: o.ClientName}
		// valkey-go's Sentinel client is otherwise event-driven only: one
		// missed +switch-master keeps it on a demoted primary
		// (SentinelOption.TopologyRefreshInterval's own doc). The naive
		// control sets the option's "off" (zero) itself rather than
		// inherit it; a release without the option (v1.0.73 and older) has
		// no periodic refresh at all.
		refresh := sentinelRefresh
		if o.NaiveSentinel {
			refresh = 0
		}
		setOption(&co.Sentinel, "TopologyRefreshInterval", refresh)
	}
	if o.PoolSize > 0 {
		co.PipelineMultiplex = pipelineMultiplex(o.PoolSize)
		co.BlockingPoolSize = o.PoolSize
	}
	if o.AddrMap != nil {
		co.DialCtxFn = mappedDial(o.AddrMap)
	}
	if co.SendToReplicas != nil {
		co.DialCtxFn = readOnlyDial(o)
		// A repaired replica returns only with a topology refresh (see
		// topology.go). NaiveTopology sets the refresh's "off" (zero, no
		// periodic refresh: cluster.go starts its ticker only when it is
		// positive, in every release since v1.0.60) rather than inherit
		// it.
		co.ClusterOption.ShardsRefreshInterval = replicaRefresh
		if o.NaiveTopology {
			co.ClusterOption.ShardsRefreshInterval = 0
		}
	}
	if replicas != nil && co.SendToReplicas != nil {
		co.ReadNodeSelector = replicas.selectNode
		co.RetryDelay = replicas.retryDelay
	}
	return co
}

// pipelineMultiplex is the largest valkey-go PipelineMultiplex whose
// 2^m pipelined connections per node fit n (Options.PoolSize).
func pipelineMultiplex(n int) int {
	m := 0
	for m < valkey.MaxPipelineMultiplex && 1<<(m+1) <= n {
		m++
	}
	return m
}

// sentinelRefresh is how often impl's valkey-go Sentinel client reconciles
// its primary with the sentinels besides +switch-master (valkey-go's doc
// suggests a few seconds; the fixtures' failovers take about as long).
const sentinelRefresh = 2 * time.Second

// mappedDial is valkey-go's own dial (valkey.go dial) to the address m maps
// dst to.
func mappedDial(m func(string) string) func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, dst string, d *net.Dialer, tlsCfg *tls.Config) (net.Conn, error) {
		if tlsCfg != nil {
			return (&tls.Dialer{NetDialer: d, Config: tlsCfg}).DialContext(ctx, "tcp", m(dst))
		}
		return d.DialContext(ctx, "tcp", m(dst))
	}
}

// sendToReplicas routes commands built read-only to replicas when o asks
// for replica reads (a Pool in ModeCluster only).
func sendToReplicas(o Options) func(valkey.Completed) bool {
	if !o.ReplicaReads || o.Mode != ModeCluster {
		return nil
	}
	return func(c valkey.Completed) bool { return c.IsReadOnly() }
}

// Do sends cmd with its keys declared through Arbitrary.Keys.
func (p *valkeyGoPool) Do(ctx context.Context, c Cmd) (any, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	built, err := p.build(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	// Read the slot before Do: valkey-go recycles a command that succeeded.
	slot, replicaRead := built.Slot(), p.replicas != nil && built.IsReadOnly()
	msg, err := p.c.Do(ctx, built).ToMessage()
	if err != nil && replicaRead && ctx.Err() != nil {
		p.replicas.readTimedOut(slot, err)
	}
	if err != nil {
		if valkey.IsValkeyNil(err) {
			return nil, nil
		}
		if _, ok := valkey.IsValkeyErr(err); ok {
			return nil, ParseServerError(valkeyGoErrorText(&msg))
		}
		return nil, err
	}
	return valkeyGoReply(&msg)
}

// valkeyGoReply converts a reply, walking aggregates itself rather than
// through ToAny so that nested error replies keep their full text.
func valkeyGoReply(m *valkey.ValkeyMessage) (any, error) {
	switch err := m.Error(); {
	case valkey.IsValkeyNil(err):
		return nil, nil
	case err != nil:
		return ParseServerError(valkeyGoErrorText(m)), nil
	}
	switch {
	case m.IsArray():
		elems, err := m.ToArray()
		if err != nil {
			return nil, err
		}
		out := make([]any, len(elems))
		for i := range elems {
			if out[i], err = valkeyGoReply(&elems[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	case m.IsMap():
		elems, err := m.ToMap()
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(elems))
		for k, e := range elems {
			if out[k], err = valkeyGoReply(&e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	v, err := m.ToAny()
	if err != nil {
		return nil, err
	}
	return normalise(v, func(any) (string, bool) { return "", false }), nil
}

// valkeyGoErrorText is the full text of an error reply. valkey-go's
// ValkeyMessage.Error (message.go) strips a leading "ERR " from every error
// (a kvrocks workaround), so its Error() text would make "ERR unknown
// command" read "unknown command" and ParseServerError could not tell it
// from an error without a code. The untouched text is only reachable through
// CacheMarshal, whose layout for a string-like message (message.go
// serialize) is 7 TTL bytes, the RESP type byte ('-' or '!'), an 8-byte
// big-endian length and the bytes. That layout is version-specific, so when
// it does not match this falls back to the stripped text.
func valkeyGoErrorText(m *valkey.ValkeyMessage) string {
	b := m.CacheMarshal(nil)
	if len(b) >= 16 && (b[7] == '-' || b[7] == '!') {
		if n := binary.BigEndian.Uint64(b[8:16]); uint64(len(b)-16) == n {
			return string(b[16:])
		}
	}
	if err := m.Error(); err != nil {
		return err.Error()
	}
	return ""
}

// crossSlotPanic is the panic value of valkey-go's command builder for keys
// in different slots (internal/cmds/cmds.go multiKeySlotErr).
const crossSlotPanic = "multi key command with different key slots are not allowed"

// build runs the Arbitrary builder, turning its cross-slot panic into a
// RefusedError; any other panic is a bug and is re-raised.
func (p *valkeyGoPool) build(c Cmd) (built valkey.Completed, err error) {
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(string); ok && s == crossSlotPanic {
				err = &RefusedError{Kind: KindCrossSlot, Msg: "valkey-go: " + s}
				return
			}
			panic(r)
		}
	}()
	a := p.c.B().Arbitrary(c.Prefix...).Keys(c.Keys...).Args(c.Args...)
	if p.replicaReads && len(c.Prefix) == 1 && readOnlyCommands[strings.ToUpper(c.Prefix[0])] {
		return a.ReadOnly(), nil
	}
	return a.Build(), nil
}

func (p *valkeyGoPool) Backend() Backend { return BackendValkeyGo }
func (p *valkeyGoPool) Version() string  { return p.version }

// Close closes the client; valkey-go's Close waits for pending calls and
// returns nothing, so neither does this.
func (p *valkeyGoPool) Close() error {
	p.c.Close()
	return nil
}

// valkeyGoErr turns a server error (*valkey.ValkeyError) met outside Do
// into a *ServerError and leaves any other error as it is. Its text has
// lost a leading "ERR " (see valkeyGoErrorText); the codes slotgate branches
// on (MOVED, ASK, CROSSSLOT, NOSCRIPT, TRYAGAIN, ...) are unaffected.
func valkeyGoErr(err error) error {
	if ve, ok := valkey.IsValkeyErr(err); ok {
		return ParseServerError(ve.Error())
	}
	return err
}
