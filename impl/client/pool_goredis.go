package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// goRedisPool is the Pool over github.com/redis/go-redis/v9.
//
// Routing, as read in go-redis v9.23.0:
//   - ClusterClient.process (osscluster.go) computes the slot once with
//     cmdSlot → cmdFirstKeyPosWithInfo (command.go). An explicit key position
//     set with Cmd.SetFirstKeyPos wins over everything else, so Do sets it to
//     len(Prefix) whenever Keys is non-empty: the slot is always the first
//     declared key's. (Without it, EVAL/EVALSHA with numkeys != "0" would
//     still route by position 3, and unknown commands by the COMMAND info
//     cache or, when that is cold, position 1.)
//   - A command with no Keys goes to the ShardPicker (round-robin over
//     primaries): keyless commands are not pinned to a node.
//   - MOVED and ASK are followed inside process (ASK with an ASKING
//     pipeline), up to MaxRedirects (default 3) times, and trigger a lazy
//     slot-map reload; TRYAGAIN/CLUSTERDOWN are retried with backoff in the
//     same loop. Only the final error reaches Do.
//   - Request policies (osscluster_router.go routeAndRun) are consulted on
//     every command, but NewClusterClient installs only
//     NewDefaultCommandPolicyResolver (command_policy_resolver.go), a static
//     table of module commands (ft.*, ...). Core commands such as MGET have
//     no policy there, so they are not split per slot even though Valkey's
//     COMMAND tips say request_policy:multi_shard (the COMMAND-driven
//     NewDynamicResolver is opt-in and not used here): MGET, EVAL and EVALSHA
//     across slots go to the first key's node and the server answers
//     CROSSSLOT.
//
// The single-node Client follows no redirects: MOVED comes back as a
// ServerError of KindMoved.
type goRedisPool struct {
	c       redis.UniversalClient
	version string
	call    time.Duration // Options.CallTimeout
}

func newGoRedisPool(ctx context.Context, o Options) (*goRedisPool, error) {
	var c redis.UniversalClient
	switch o.Mode {
	case ModeCluster:
		co := goRedisClusterOptions(o)
		co.ReadOnly = o.ReplicaReads
		// A CallTimeout bounds the read too: go-redis reads under the
		// call's context only with this set (otherwise a read started is
		// bounded by ReadTimeout alone).
		co.ContextTimeoutEnabled = o.CallTimeout > 0
		if o.ReplicaReads && !o.NaiveTopology {
			// Options of go-redis v9.21 and later; an older release
			// reloads every 10 s and skips a failing node for 15 s, and
			// the replica drills judge that.
			setOption(co, "ClusterStateReloadInterval", replicaRefresh)
			setOption(co, "FailingTimeoutSeconds", int(replicaRefresh/time.Second))
		}
		cc := redis.NewClusterClient(co)
		if !o.NaiveTopology && !o.StaticSlotMap {
			reloadOnNodeFailure(cc)
		}
		c = cc
	case ModeSingle:
		so := goRedisOptions(o)
		so.ContextTimeoutEnabled = o.CallTimeout > 0
		c = redis.NewClient(so)
	case ModeSentinel:
		c = redis.NewFailoverClient(goRedisFailoverOptions(o))
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping %v: %w", o.Addrs, goRedisErr(err))
	}
	return &goRedisPool{c: c, version: backendVersion(BackendGoRedis), call: o.CallTimeout}, nil
}

// goRedisOptions maps Options onto a single-node client's options.
func goRedisOptions(o Options) *redis.Options {
	ro := &redis.Options{
		Addr:        o.Addrs[0],
		Protocol:    int(o.Protocol),
		ClientName:  o.ClientName,
		Username:    o.Username,
		Password:    o.Password,
		TLSConfig:   o.TLS,
		DialTimeout: o.DialTimeout,
		ReadTimeout: o.ReadTimeout,
		// Zero keeps go-redis's defaults (see Options.PoolSize).
		PoolSize:       o.PoolSize,
		MaxActiveConns: o.PoolSize,
	}
	setOption(ro, "PipelinePoolSize", goRedisPipelinePool(o))
	return ro
}

// goRedisFailoverOptions maps Options onto a Sentinel-following client's
// options: Addrs are the sentinels. The sentinels have no credentials here
// (SentinelUsername/Password stay empty); the primary's are o's.
func goRedisFailoverOptions(o Options) *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:    o.MasterName,
		SentinelAddrs: o.Addrs,
		Protocol:      int(o.Protocol),
		ClientName:    o.ClientName,
		Username:      o.Username,
		Password:      o.Password,
		TLSConfig:     o.TLS,
		DialTimeout:   o.DialTimeout,
		ReadTimeout:   o.ReadTimeout,
		Dialer:        goRedisDialer(o),
	}
}

// goRedisDialer is nil (go-redis's own dialer) unless o maps addresses; a
// custom Dialer replaces go-redis's TLS handshake too, so it does that.
func goRedisDialer(o Options) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if o.AddrMap == nil {
		return nil
	}
	timeout := o.DialTimeout
	if timeout == 0 {
		timeout = 5 * time.Second // go-redis's DialTimeout default
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
		if o.TLS != nil {
			return (&tls.Dialer{NetDialer: d, Config: o.TLS}).DialContext(ctx, network, o.AddrMap(addr))
		}
		return d.DialContext(ctx, network, o.AddrMap(addr))
	}
}

// goRedisClusterOptions maps Options onto a cluster client's options.
func goRedisClusterOptions(o Options) *redis.ClusterOptions {
	co := &redis.ClusterOptions{
		Addrs:       o.Addrs,
		Protocol:    int(o.Protocol),
		ClientName:  o.ClientName,
		Username:    o.Username,
		Password:    o.Password,
		TLSConfig:   o.TLS,
		DialTimeout: o.DialTimeout,
		ReadTimeout: o.ReadTimeout,
		Dialer:      goRedisDialer(o),
		// Zero keeps go-redis's defaults (see Options.PoolSize).
		PoolSize:       o.PoolSize,
		MaxActiveConns: o.PoolSize,
	}
	setOption(co, "PipelinePoolSize", goRedisPipelinePool(o))
	if o.StaticSlotMap {
		co.ClusterSlots = staticSlots(o)
	}
	return co
}

// goRedisPipelinePool is go-redis's PipelinePoolSize for o: with a
// PoolSize, -1 (pipelines, and the ASKING pipeline of an ASK redirect, on
// the main pool), since go-redis v9.23.0 keeps a separate pipeline pool of
// up to 10 connections per node outside MaxActiveConns; zero, the
// library's default, without one. Releases without the setting (v9.17)
// have no separate pipeline pool to bound, and the connection-leak
// requirement judges them as they are.
func goRedisPipelinePool(o Options) int {
	if o.PoolSize > 0 {
		return -1
	}
	return 0
}

// Do sends cmd with its first key position declared, so a ClusterClient
// routes by the first key of cmd.Keys.
func (p *goRedisPool) Do(ctx context.Context, c Cmd) (any, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	flat := c.flatten()
	args := make([]any, len(flat))
	for i, a := range flat {
		args[i] = a
	}
	cmd := redis.NewCmd(ctx, args...)
	if len(c.Keys) > 0 && len(c.Prefix) <= math.MaxInt8 {
		cmd.SetFirstKeyPos(int8(len(c.Prefix)))
	}
	goRedisProcess(ctx, p.c, cmd, c)
	v, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, goRedisErr(err)
	}
	return normalise(v, goRedisNested), nil
}

func (p *goRedisPool) Backend() Backend { return BackendGoRedis }
func (p *goRedisPool) Version() string  { return p.version }
func (p *goRedisPool) Close() error     { return p.c.Close() }

// goRedisErr turns a server error reply into a *ServerError and leaves any
// other error (network, timeout, closed client) as it is. go-redis types its
// error replies (proto.RedisError, *proto.MovedError, ...); all implement
// redis.Error and carry the reply text verbatim in Error().
func goRedisErr(err error) error {
	var re redis.Error
	if errors.As(err, &re) && !errors.Is(err, redis.Nil) {
		return ParseServerError(re.Error())
	}
	return err
}

// goRedisNested recognises an error reply nested in an aggregate reply.
func goRedisNested(v any) (string, bool) {
	if e, ok := v.(redis.Error); ok {
		return e.Error(), true
	}
	return "", false
}
