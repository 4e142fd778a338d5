// Package client is the narrow seam between slotgate's reference
// implementation and the two Go clients it is tested on (go-redis v9,
// valkey-go).
//
// Spec 000 §Client Architecture (the split): a command pool carries all routed
// traffic (GET/SET/MGET/Lua/SPUBLISH), and a separate subscription client owns
// the subscriber loops. The two can run different protocols (RESP2/RESP3).
// Only what impl/ needs is here; everything else stays behind the backends.
package client

import (
	"context"
	"crypto/tls"
	"time"
)

// Backend names a client library.
type Backend string

const (
	BackendGoRedis  Backend = "go-redis"  // github.com/redis/go-redis/v9
	BackendValkeyGo Backend = "valkey-go" // github.com/valkey-io/valkey-go
)

// Backends lists every backend, in report order.
var Backends = []Backend{BackendGoRedis, BackendValkeyGo}

// Protocol is the RESP version a connection speaks (HELLO 2 / HELLO 3).
type Protocol int

const (
	RESP2 Protocol = 2
	RESP3 Protocol = 3
)

// Mode says how the client treats its endpoint.
type Mode string

const (
	// ModeCluster is a cluster-aware client: it reads the slot map and
	// follows MOVED/ASK.
	ModeCluster Mode = "cluster"
	// ModeSingle talks to one node, as the relay does today (cluster mode
	// disabled, spec 000 §System Model).
	ModeSingle Mode = "single"
	// ModeSentinel talks to the primary of a replicated set (cluster mode
	// disabled, one primary + replicas, automatic failover) that Valkey
	// Sentinel names: Addrs are the sentinels and MasterName the monitored
	// set, as production's primary + replica with auto-failover (spec 000
	// §Problem Statement). go-redis NewFailoverClient, valkey-go
	// ClientOption.Sentinel. Only a Pool takes it.
	ModeSentinel Mode = "sentinel"
)

// Options configures a Pool or a Subscriber. Zero values are the clients'
// own defaults, except Protocol, which defaults to RESP3.
type Options struct {
	Backend  Backend
	Mode     Mode
	Protocol Protocol
	// Addrs are seed addresses (host:port). ModeSingle uses Addrs[0].
	Addrs    []string
	Username string
	Password string
	TLS      *tls.Config
	// ClientName is sent with CLIENT SETNAME on every connection, so faults
	// can kill exactly this client's connections (fixtures Node.KillClient).
	ClientName string
	// DialTimeout and ReadTimeout bound each network step; zero keeps the
	// client's default.
	DialTimeout time.Duration
	ReadTimeout time.Duration
	// CallTimeout bounds one Pool call (Do, DoMulti, Exec) — every dial,
	// every retry the library makes on its own, impl's re-sends, and the
	// read (go-redis ContextTimeoutEnabled, so its reads follow the
	// context) — unless the caller's context ends sooner; zero leaves a
	// call bounded by the library alone. Spec
	// 000 §Client Architecture ("a dead primary halts dispatch"): against a
	// node that answers no SYN, go-redis v9.23.0 dials DialerRetries (5)
	// times per connection and its cluster loop (or impl's re-send of a
	// command that provably did not run) dials again up to MaxRedirects
	// (3) times, so a 400 ms DialTimeout let one call wait about ten
	// seconds; the client-surface row's dial-timeout scenario measures it.
	// valkey-go dials once per call. Set it to DialTimeout + ReadTimeout
	// for a call that may dial once and read once. Subscribers ignore it.
	CallTimeout time.Duration
	// PoolSize caps the connections a Pool keeps to each node for ordinary
	// (non-blocking) commands, so a relay's connection count is a number
	// it chose (spec 000 §Client Architecture, the command pool): go-redis
	// ClusterOptions.PoolSize and MaxActiveConns, and no separate pipeline
	// pool (PipelinePoolSize -1) — PoolSize alone is "the base number":
	// go-redis v9.23.0 dials past it under load and keeps up to 10 more
	// pipeline connections per node (12 on one node of a PoolSize 4 pool
	// through slot moves, measured by the client-surface row's
	// connection-leak scenario); valkey-go pipelines
	// over 2^PipelineMultiplex connections per node, so PipelineMultiplex is
	// the largest whose connections fit PoolSize, and BlockingPoolSize (the
	// connections of blocking commands, which the relay does not send) is
	// PoolSize too. Zero keeps the libraries' defaults: go-redis 5 ×
	// GOMAXPROCS, valkey-go one pipelined connection per cluster node and
	// up to 1024 blocking ones. A go-redis Subscriber opened with it keeps
	// the same per-node bounds (its cluster client is built from the same
	// options); a valkey-go Subscriber ignores it.
	PoolSize int
	// ReplicaReads sends a ModeCluster Pool's read-only commands to
	// replicas, as a relay that scales reads does (spec 000 §Conformance,
	// Failure drills: replica connection repair under load): go-redis
	// ClusterOptions.ReadOnly (read-only by the server's COMMAND info),
	// valkey-go SendToReplicas for the commands in readOnlyCommands.
	// Subscribers ignore it.
	// A read whose replica fails (a network error, LOADING, or its deadline
	// running out) moves that replica to a short cool-down and, when the
	// deadline allows, is retried at once on the primary: valkey-go does not
	// do this itself (see replicaRouter); go-redis does (it marks a failed
	// node and reads from another).
	ReplicaReads bool
	// NaiveReplicaReads keeps valkey-go's own replica-read behaviour
	// (SendToReplicas alone: reads stay on a dead replica until a topology
	// refresh drops it) instead of impl's replica fail-over. It exists for
	// negative controls (spec 000 §Conformance, Failure drills) and means
	// nothing without ReplicaReads, or for go-redis.
	NaiveReplicaReads bool
	// NaiveTopology keeps only the client library's own slot-map refresh
	// (go-redis: on a redirect or every 60 s, 10 s before v9.21; valkey-go: on a redirect or
	// an error, never periodically) instead of impl's recovery from a dead
	// node (see topology.go): go-redis pools and subscribers then keep
	// dialing a killed primary, and replica-read pools of both backends do
	// not see a repaired replica again. It exists for the failure-drills
	// negative controls (spec 000 §Client Architecture, "a dead primary
	// halts dispatch").
	NaiveTopology bool
	// StaticSlotMap pins a go-redis ModeCluster client's slot map to the
	// one it read when it started: ClusterOptions.ClusterSlots serves that
	// snapshot to every reload the library makes (periodic, on a MOVED, or
	// impl's own), so only a per-command redirect reaches a new owner and a
	// killed primary is dialed until the client is closed. A client
	// configured with a fixed slot map does exactly this. It exists for the
	// failure-drills negative controls (spec 000 §Client Architecture, "a
	// dead primary halts dispatch"): NaiveTopology alone leaves the halt to
	// the library's periodic reload, 10 s before go-redis v9.21 (not
	// configurable) and 60 s by default since v9.22, so its hazard would
	// hang on the linked version. valkey-go ignores it.
	StaticSlotMap bool
	// MasterName is the Sentinel master set a ModeSentinel client follows.
	MasterName string
	// AddrMap, when set, rewrites every address the client dials (a node a
	// sentinel or the slot map names) just before dialing: the endpoint
	// mapping of a network where servers announce addresses clients do not
	// reach directly (fixtures Topology.ClientAddr). Nil dials as announced.
	AddrMap func(addr string) string
	// NaiveSentinel leaves valkey-go's Sentinel client purely event-driven
	// (SentinelOption.TopologyRefreshInterval zero, its default), so one
	// missed +switch-master binds it to a demoted primary; impl otherwise
	// reconciles every sentinelRefresh. A negative control; go-redis has no
	// such setting.
	NaiveSentinel bool
}

// Cmd is one command with its keys declared, so both clients can route it by
// slot: the wire form is Prefix..., Keys..., Args....
// For EVALSHA, Prefix is ["EVALSHA", sha, numkeys].
type Cmd struct {
	Prefix []string
	Keys   []string
	Args   []string
}

// NewCmd builds a command whose name is followed directly by its keys.
func NewCmd(name string, keys []string, args ...string) Cmd {
	return Cmd{Prefix: []string{name}, Keys: keys, Args: args}
}

// Pool is the command pool.
type Pool interface {
	// Do sends one command, routed in ModeCluster by the slot of
	// cmd.Keys[0], and returns its reply normalised to nil, int64, string,
	// float64, []any or map[string]any. Scalars and arrays look the same
	// under RESP2 and RESP3 (RESP3 booleans become int64 1/0, big numbers
	// strings; an error nested in an array is a *ServerError element), but
	// the shape still follows the protocol where the server's does: RESP3
	// answers HGETALL with a map and ZSCORE with a float64, RESP2 with a flat
	// array and a string. A nil reply is (nil, nil).
	// Server errors come back as *ServerError; a command the client library
	// refused to send (valkey-go, keys in different slots) as *RefusedError.
	// Subscription commands are refused with ErrBadCommand.
	Do(ctx context.Context, cmd Cmd) (any, error)
	// DoMulti sends cmds as one pipeline across slots and answers each
	// command on its own, at its own index (see pipeline.go): a failure of
	// one key never stands for the batch (spec 000 §Conformance, Locality
	// contract: explicit per-key pipelines with partial-failure handling
	// at the call site).
	DoMulti(ctx context.Context, cmds []Cmd) []Result
	// Exec runs cmds as one MULTI/EXEC transaction in one slot, re-sent
	// whole while the server proves it did not run (see pipeline.go).
	Exec(ctx context.Context, cmds []Cmd) ([]Result, error)
	// Backend reports which client library serves this pool.
	Backend() Backend
	// Version is the client library and version, e.g. "go-redis v9.23.0".
	Version() string
	Close() error
}

// MessageKind says what a Message carries: a published message, or a change
// in the subscription that the session did not ask for.
type MessageKind string

const (
	// MsgMessage is a PUBLISH delivered to a SUBSCRIBEd channel.
	MsgMessage MessageKind = "message"
	// MsgSMessage is an SPUBLISH delivered to an SSUBSCRIBEd shard channel.
	MsgSMessage MessageKind = "smessage"
	// MsgPMessage is a PUBLISH matching a PSUBSCRIBEd pattern; Pattern is set.
	MsgPMessage MessageKind = "pmessage"
	// MsgDropped: the server ended a subscription the session did not
	// unsubscribe. Valkey does this for every shard channel of a slot that
	// migrated away or was deleted (a "sunsubscribe" push). Channel (Pattern,
	// for a pattern) names it and Payload holds the server's unsubscribe kind,
	// or the error that ended it. Neither backend resubscribes: the caller
	// must call SSubscribe again, and messages are lost until it does.
	MsgDropped MessageKind = "dropped"
	// MsgResubscribed: the client library re-sent a subscription by itself,
	// after reconnecting. Channel (Pattern) names it and Payload holds the
	// confirmation kind ("subscribe", "ssubscribe", "psubscribe"). Messages
	// published while the connection was down are lost.
	MsgResubscribed MessageKind = "resubscribed"
)

// Message is one pub/sub delivery, or a notice about the subscription
// itself (MsgDropped, MsgResubscribed). Messages of one connection arrive in
// order; valkey-go's MsgResubscribed is the exception (its hook may not
// block, so the notice is sent from another goroutine).
type Message struct {
	Kind    MessageKind
	Pattern string
	Channel string
	Payload string
}

// Subscriber is the subscription client: one logical subscription session
// with its own connection(s), separate from the Pool.
type Subscriber interface {
	// Subscribe, SSubscribe and PSubscribe add channels/patterns and return
	// once the server confirmed every one of them, or with the server's
	// refusal as a *ServerError. In ModeCluster, SSubscribe can fail with
	// KindMoved right after a slot migrated (the subscriber's slot map is
	// stale; it is reloaded), and a retry then reaches the new owner.
	Subscribe(ctx context.Context, channels ...string) error
	SSubscribe(ctx context.Context, channels ...string) error
	PSubscribe(ctx context.Context, patterns ...string) error
	// Unsubscribe, SUnsubscribe and PUnsubscribe remove the named
	// subscriptions, or every one of that kind when none is named, and
	// return once the server confirmed.
	Unsubscribe(ctx context.Context, channels ...string) error
	SUnsubscribe(ctx context.Context, channels ...string) error
	PUnsubscribe(ctx context.Context, patterns ...string) error
	// Messages delivers every message in arrival order, and the MsgDropped
	// and MsgResubscribed notices; it is buffered and closed by Close. A
	// consumer that stops reading stalls delivery (nothing is dropped).
	Messages() <-chan Message
	Backend() Backend
	Close() error
}
