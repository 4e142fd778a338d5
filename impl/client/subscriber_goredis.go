package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotgate/slotgate/impl/slot"
)

// goRedisSubscriber is the Subscriber over go-redis v9.
//
// What go-redis v9.23.0 does, as read in its source:
//
//   - One *redis.PubSub is one connection to one node. ClusterClient.pubSub
//     (osscluster.go) picks that node when the connection is opened, by the
//     slot of the first channel it knows (PubSub.conn in pubsub.go passes
//     channels+schannels+the new names; patterns are hashed only when they
//     are all there is), or a random node when it knows none. So one PubSub
//     cannot hold shard channels of slots owned by different nodes: the
//     server would answer MOVED (or CROSSSLOT for one SSUBSCRIBE spanning
//     slots). This subscriber therefore opens one PubSub per slot for shard
//     channels in ModeCluster, plus one for SUBSCRIBE/PSUBSCRIBE (classic
//     pub/sub is broadcast cluster-wide, so any node serves). In ModeSingle
//     it opens two: classic, and sharded. Keeping sharded and classic apart
//     is also how a delivery's kind is known: redis.Message does not say
//     whether it came as "message" or "smessage" (pubsub.go newMessage).
//   - PubSub.Subscribe/SSubscribe/PSubscribe only write the command; the
//     confirmation arrives later through Receive as a *redis.Subscription.
//     This subscriber runs its own Receive loop per PubSub and returns from
//     Subscribe only when every name's confirmation arrived; an error reply
//     (MOVED, CROSSSLOT, NOPERM) fails the pending call.
//   - Disconnect: auto-resubscribes. A network error from Receive makes
//     releaseConn → reconnect drop the connection, and the next Receive
//     dials again (routed by the first known channel's slot, per the
//     client's cached slot map) and re-sends SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE
//     for every name in the PubSub's maps (pubsub.go resubscribe). Messages
//     published meanwhile are lost. The re-sent confirmations reach this
//     subscriber unsolicited and are surfaced as MsgResubscribed.
//   - Server-initiated sunsubscribe (slot migrated or deleted): go-redis
//     only reports it as a *redis.Subscription{Kind: "sunsubscribe"}. It
//     does NOT resubscribe, and it does not forget the channel either:
//     PubSub.schannels is changed only by the client's own SUnsubscribe, so
//     after the next reconnect go-redis would silently SSUBSCRIBE it again.
//     Channel() (which this subscriber does not use) drops Subscription
//     events, so a Channel() user never learns of the loss. This subscriber
//     emits MsgDropped and, once a slot's PubSub has lost all its channels,
//     closes it, so a later SSubscribe opens a fresh one at the slot's
//     current owner and go-redis cannot resubscribe behind the caller's back.
//   - PubSub.Channel()'s health check (a PING after 3 s of silence, and a
//     reconnect when it fails) belongs to Channel(), not to PubSub, so it is
//     not active here: a connection that dies without a TCP error is noticed
//     only by TCP keepalive. Channel() is not used because it hides both the
//     Subscription events and error replies, and drops messages after a
//     minute of back-pressure.
//   - The subscriber's ClusterClient has its own slot map, refreshed every
//     ClusterStateReloadInterval (60 s) or on a MOVED seen by a command. A
//     MOVED reply to SSUBSCRIBE fails the call and triggers ReloadState, so a
//     retry by the caller goes to the new owner.
//   - A broken connection gives no MOVED: the reconnect dials the node the
//     cached slot map names. After a primary died and its replica took over
//     (a kill failover), that is the dead node, again and again, until the
//     60 s reload — the auto-resubscribe silently never happens (measured
//     by rows/subscriptions, failover). So a ModeCluster session's receive
//     loop reloads the slot map on every network error, and the next
//     reconnect reaches the new owner; so does an SSubscribe whose
//     connection could not be opened (a retired session's successor, after
//     the relay's re-SSUBSCRIBE: failure-drills full profile, 32 s halts).
type goRedisSubscriber struct {
	*hub
	cluster *redis.ClusterClient // ModeCluster
	single  *redis.Client        // ModeSingle

	// naive keeps go-redis's own reconnect routing (Options.NaiveTopology):
	// no slot-map reload on a broken connection.
	naive bool

	mu      sync.Mutex
	classic *grSession
	sharded map[int]*grSession // by slot (ModeCluster) or 0 (ModeSingle)
}

func newGoRedisSubscriber(ctx context.Context, o Options) (*goRedisSubscriber, error) {
	s := &goRedisSubscriber{hub: newHub(), sharded: make(map[int]*grSession)}
	var c redis.UniversalClient
	switch o.Mode {
	case ModeCluster:
		s.cluster = redis.NewClusterClient(goRedisClusterOptions(o))
		s.naive = o.NaiveTopology || o.StaticSlotMap
		c = s.cluster
	case ModeSingle:
		s.single = redis.NewClient(goRedisOptions(o))
		c = s.single
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping %v: %w", o.Addrs, goRedisErr(err))
	}
	return s, nil
}

func (s *goRedisSubscriber) Backend() Backend { return BackendGoRedis }

// newPubSub makes an unconnected PubSub; it connects on its first command.
func (s *goRedisSubscriber) newPubSub(ctx context.Context) *redis.PubSub {
	if s.cluster != nil {
		return s.cluster.Subscribe(ctx)
	}
	return s.single.Subscribe(ctx)
}

// shardKey is the sharded session a shard channel belongs to.
func (s *goRedisSubscriber) shardKey(channel string) int {
	if s.cluster != nil {
		return slot.Of(channel)
	}
	return 0
}

// classicSession returns the SUBSCRIBE/PSUBSCRIBE session, creating it when
// create is set; nil when it does not exist or Close has begun.
func (s *goRedisSubscriber) classicSession(ctx context.Context, create bool) *grSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.classic == nil && create && !s.closing() {
		s.classic = newGRSession(s.hub, s.newPubSub(ctx), false, false, nil)
		s.classic.reload = s.reloadFunc()
	}
	return s.classic
}

// shardSession returns the session for shard key k, creating it when create
// is set; nil when it does not exist or Close has begun.
func (s *goRedisSubscriber) shardSession(ctx context.Context, k int, create bool) *grSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.sharded[k]
	if g == nil && create && !s.closing() {
		g = newGRSession(s.hub, s.newPubSub(ctx), true, s.cluster != nil, func(g *grSession) {
			s.mu.Lock()
			if s.sharded[k] == g {
				delete(s.sharded, k)
			}
			s.mu.Unlock()
		})
		g.reload = s.reloadFunc()
		s.sharded[k] = g
	}
	return g
}

// reloadFunc returns a session's slot-map refresh: a lazy reload in
// ModeCluster (go-redis coalesces concurrent ones), nil in ModeSingle.
func (s *goRedisSubscriber) reloadFunc() func() {
	if s.cluster == nil || s.naive {
		return nil
	}
	return func() { s.cluster.ReloadState(context.Background()) }
}

func (s *goRedisSubscriber) Subscribe(ctx context.Context, channels ...string) error {
	return s.classicOp(ctx, confSubscribe, channels, (*redis.PubSub).Subscribe)
}

func (s *goRedisSubscriber) PSubscribe(ctx context.Context, patterns ...string) error {
	return s.classicOp(ctx, confPSubscribe, patterns, (*redis.PubSub).PSubscribe)
}

func (s *goRedisSubscriber) Unsubscribe(ctx context.Context, channels ...string) error {
	return s.classicOp(ctx, confUnsubscribe, channels, (*redis.PubSub).Unsubscribe)
}

func (s *goRedisSubscriber) PUnsubscribe(ctx context.Context, patterns ...string) error {
	return s.classicOp(ctx, confPUnsubscribe, patterns, (*redis.PubSub).PUnsubscribe)
}

// pubSubCall is one of PubSub's (un)subscribe methods.
type pubSubCall func(ps *redis.PubSub, ctx context.Context, names ...string) error

// classicOp runs one (un)subscribe on the classic session. An unsubscribe
// with no names means every name of that kind the session holds.
func (s *goRedisSubscriber) classicOp(ctx context.Context, kind string, names []string, call pubSubCall) error {
	if s.closing() {
		return ErrClosed
	}
	unsub := isUnsubscribeKind(kind)
	g := s.classicSession(ctx, !unsub)
	if g == nil {
		if unsub {
			return nil
		}
		return ErrClosed
	}
	if unsub && len(names) == 0 {
		names = g.names(subscribeKindOf(kind))
	}
	if len(names) == 0 {
		return nil
	}
	if err := g.op(ctx, kind, names, call); err != nil {
		return fmt.Errorf("%s %v: %w", kind, names, err)
	}
	return nil
}

func (s *goRedisSubscriber) SSubscribe(ctx context.Context, channels ...string) error {
	if s.closing() {
		return ErrClosed
	}
	for _, grp := range s.groupByShard(channels) {
		g := s.shardSession(ctx, grp.key, true)
		if g == nil {
			return ErrClosed
		}
		err := g.op(ctx, confSSubscribe, grp.names, (*redis.PubSub).SSubscribe)
		if errors.Is(err, errSessionRetired) && !s.closing() {
			// The slot's session was retired under us (the server had just
			// dropped its channels); one fresh session is the fix.
			if g = s.shardSession(ctx, grp.key, true); g == nil {
				return ErrClosed
			}
			err = g.op(ctx, confSSubscribe, grp.names, (*redis.PubSub).SSubscribe)
		}
		if err == nil {
			continue
		}
		if KindOf(err) == KindMoved && s.cluster != nil {
			s.cluster.ReloadState(ctx)
		}
		if reload := s.reloadFunc(); reload != nil && nodeFailure(err) {
			// The session's connection could not be opened at the node
			// the slot map names: after a kill failover that is the dead
			// primary, and no receive loop is left to notice (measured:
			// the relay's re-SSUBSCRIBE got EOF for 30 s while the new
			// primary answered 0 receivers). Refresh, so the caller's
			// retry reaches the new owner.
			reload()
		}
		if KindOf(err) != "" && g.empty() {
			// The server refused and the session holds nothing: close it,
			// so go-redis does not re-send the refused names on a reconnect.
			g.retire(err)
		}
		return fmt.Errorf("ssubscribe %v: %w", grp.names, err)
	}
	return nil
}

func (s *goRedisSubscriber) SUnsubscribe(ctx context.Context, channels ...string) error {
	if s.closing() {
		return ErrClosed
	}
	var groups []shardGroup
	if len(channels) == 0 {
		s.mu.Lock()
		for k, g := range s.sharded {
			if names := g.names(confSSubscribe); len(names) > 0 {
				groups = append(groups, shardGroup{key: k, names: names})
			}
		}
		s.mu.Unlock()
	} else {
		groups = s.groupByShard(channels)
	}
	for _, grp := range groups {
		g := s.shardSession(ctx, grp.key, false)
		if g == nil {
			continue
		}
		if err := g.op(ctx, confSUnsubscribe, grp.names, (*redis.PubSub).SUnsubscribe); err != nil {
			return fmt.Errorf("sunsubscribe %v: %w", grp.names, err)
		}
		if g.slotBound && g.empty() {
			g.retire(nil) // release the connection
		}
	}
	return nil
}

// shardGroup is the shard channels of one sharded session.
type shardGroup struct {
	key   int
	names []string
}

// groupByShard splits channels by shard key, in order of first appearance.
func (s *goRedisSubscriber) groupByShard(channels []string) []shardGroup {
	var groups []shardGroup
	idx := make(map[int]int)
	for _, ch := range channels {
		k := s.shardKey(ch)
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, shardGroup{key: k})
		}
		groups[i].names = append(groups[i].names, ch)
	}
	return groups
}

// Close closes every PubSub and the client, waits for the receive loops and
// closes Messages.
func (s *goRedisSubscriber) Close() error {
	return s.shutdown(func() error {
		s.mu.Lock()
		sessions := make([]*grSession, 0, len(s.sharded)+1)
		if s.classic != nil {
			sessions = append(sessions, s.classic)
		}
		for _, g := range s.sharded {
			sessions = append(sessions, g)
		}
		s.mu.Unlock()
		for _, g := range sessions {
			g.retire(ErrClosed)
		}
		if s.cluster != nil {
			return s.cluster.Close()
		}
		return s.single.Close()
	})
}

// errSessionRetired fails an operation on a PubSub this subscriber closed
// while the operation waited (its slot's channels were all dropped).
var errSessionRetired = errors.New("subscription connection retired")

// reconnectPause spaces Receive calls after a network error, while go-redis
// redials.
const reconnectPause = 50 * time.Millisecond

// grSession is one go-redis PubSub (one connection) and its receive loop.
type grSession struct {
	h  *hub
	ps *redis.PubSub
	// sharded sessions carry shard channels only; their plain messages are
	// "smessage"s.
	sharded bool
	// slotBound sessions (ModeCluster shard sessions) hold one slot and are
	// retired when the server drops all their channels.
	slotBound bool
	onRetire  func(*grSession)
	// reload refreshes the client's slot map after a broken connection
	// (nil in ModeSingle).
	reload func()

	opMu sync.Mutex // one operation at a time, so an error reply is its own

	mu      sync.Mutex
	subs    map[subKey]struct{}
	pending map[subKey]int // confirmations the current operation awaits
	opDone  chan error     // non-nil while an operation waits
	started bool
	retired bool
}

func newGRSession(h *hub, ps *redis.PubSub, sharded, slotBound bool, onRetire func(*grSession)) *grSession {
	return &grSession{h: h, ps: ps, sharded: sharded, slotBound: slotBound, onRetire: onRetire, subs: make(map[subKey]struct{})}
}

// op sends one (un)subscribe for names and waits until the server confirmed
// each of them, or refused.
func (g *grSession) op(ctx context.Context, kind string, names []string, call pubSubCall) error {
	g.opMu.Lock()
	defer g.opMu.Unlock()

	done := make(chan error, 1)
	g.mu.Lock()
	if g.retired {
		g.mu.Unlock()
		return errSessionRetired
	}
	g.pending = make(map[subKey]int, len(names))
	for _, n := range names {
		g.pending[subKey{kind, n}]++
	}
	g.opDone = done
	g.mu.Unlock()

	// The first write opens the connection, routed by these names; only
	// then may the loop call Receive (which would otherwise open an
	// unrouted one).
	if err := call(g.ps, ctx, names...); err != nil {
		g.endOp(nil)
		return goRedisErr(err)
	}
	g.startLoop()

	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		g.endOp(nil)
		return ctx.Err()
	case <-g.h.done:
		return ErrClosed
	}
}

// endOp finishes the pending operation with err (nil: just forget it).
func (g *grSession) endOp(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opDone != nil && err != nil {
		g.opDone <- err
	}
	g.opDone, g.pending = nil, nil
}

func (g *grSession) startLoop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started || g.retired {
		return
	}
	g.started = g.h.spawn(g.loop)
}

// loop receives until the session is retired or the subscriber closed.
func (g *grSession) loop() {
	ctx := context.Background()
	for {
		msg, err := g.ps.Receive(ctx)
		if g.h.closing() || g.isRetired() {
			return
		}
		if err != nil {
			if se := goRedisErr(err); KindOf(se) != "" {
				g.refused(se)
				continue
			}
			// The connection broke; the next Receive redials and
			// resubscribes (pubsub.go releaseConn → reconnect), routed by
			// the slot map, which may name a dead primary: refresh it.
			if g.reload != nil {
				g.reload()
			}
			select {
			case <-time.After(reconnectPause):
			case <-g.h.done:
				return
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			g.confirmed(m.Kind, m.Channel)
		case *redis.Message:
			g.h.emit(g.message(m))
		}
	}
}

// message converts a delivery; its kind follows from the session.
func (g *grSession) message(m *redis.Message) Message {
	out := Message{Kind: MsgMessage, Pattern: m.Pattern, Channel: m.Channel, Payload: m.Payload}
	switch {
	case m.Pattern != "":
		out.Kind = MsgPMessage
	case g.sharded:
		out.Kind = MsgSMessage
	}
	return out
}

// confirmed handles one (un)subscribe confirmation: it either answers the
// pending operation or is news (a resubscription after reconnect, or the
// server dropping a shard channel).
func (g *grSession) confirmed(kind, name string) {
	g.mu.Lock()
	k := subKey{kind, name}
	if g.opDone != nil && g.pending[k] > 0 {
		g.apply(kind, name)
		if g.pending[k]--; g.pending[k] == 0 {
			delete(g.pending, k)
		}
		if len(g.pending) == 0 {
			g.opDone <- nil
			g.opDone, g.pending = nil, nil
		}
		g.mu.Unlock()
		return
	}
	sk := subKey{subscribeKindOf(kind), name}
	_, had := g.subs[sk]
	g.apply(kind, name)
	drained := g.slotBound && len(g.subs) == 0 && g.opDone == nil
	g.mu.Unlock()

	switch {
	case isUnsubscribeKind(kind) && had:
		g.h.emit(sk.notice(MsgDropped, kind))
		if drained {
			g.retire(nil)
		}
	case !isUnsubscribeKind(kind) && had:
		g.h.emit(sk.notice(MsgResubscribed, kind))
	}
	// A subscribe confirmation for a name the session did not hold is the
	// late answer to an operation that gave up (ctx expired): the name is
	// subscribed now, and apply recorded it.
}

// apply records a confirmation in subs. g.mu must be held.
func (g *grSession) apply(kind, name string) {
	if isUnsubscribeKind(kind) {
		delete(g.subs, subKey{subscribeKindOf(kind), name})
		return
	}
	g.subs[subKey{kind, name}] = struct{}{}
}

// refused handles an error reply: it fails the pending operation, or, with
// none pending, it answers a resubscription go-redis sent after a reconnect
// (say MOVED, because the slot moved meanwhile): then every name the
// session held is lost, and a slot-bound session is retired.
func (g *grSession) refused(err error) {
	g.mu.Lock()
	if g.opDone != nil {
		g.opDone <- err
		g.opDone, g.pending = nil, nil
		g.mu.Unlock()
		return
	}
	if !g.slotBound {
		g.mu.Unlock()
		return
	}
	lost := make([]subKey, 0, len(g.subs))
	for k := range g.subs {
		lost = append(lost, k)
	}
	clear(g.subs)
	g.mu.Unlock()
	for _, k := range lost {
		g.h.emit(k.notice(MsgDropped, err.Error()))
	}
	g.retire(err)
}

// retire closes the PubSub for good; a pending operation fails.
func (g *grSession) retire(reason error) {
	g.mu.Lock()
	if g.retired {
		g.mu.Unlock()
		return
	}
	g.retired = true
	if g.opDone != nil {
		err := errSessionRetired
		if reason != nil {
			err = fmt.Errorf("%w: %w", errSessionRetired, reason)
		}
		g.opDone <- err
		g.opDone, g.pending = nil, nil
	}
	g.mu.Unlock()
	if g.onRetire != nil {
		g.onRetire(g)
	}
	_ = g.ps.Close()
}

func (g *grSession) isRetired() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.retired
}

// empty reports that the session holds no subscription.
func (g *grSession) empty() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.subs) == 0
}

// names lists the session's subscriptions of kind, sorted.
func (g *grSession) names(kind string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for k := range g.subs {
		if k.kind == kind {
			out = append(out, k.name)
		}
	}
	slices.Sort(out)
	return out
}
