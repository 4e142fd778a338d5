package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Spec 000 §Client Architecture and §Conformance, Failure drills (replica
// connection repair under load): reads that may go to replicas keep working
// while a replica is dead. Where the client library does not do this itself,
// impl does.
//
// valkey-go v1.0.79 does not. With SendToReplicas a read-only command is
// sent to the replica its slot map names; a read that fails with a network
// error is retried (ReadOnly commands are retryable) with exponential
// backoff, but every retry picks the same replica (cluster.go do → pick), so
// it fails again until the caller's deadline. The replica leaves the slot
// map only when a topology refresh no longer sees it, which is after the
// cluster marks it FAIL (cluster-node-timeout, then gossip). Measured in the
// failure-drills replica-repair drill (smoke: 3×1, node timeout 2 s, 4 keys
// per shard, 1 s per-call timeout): the dead replica's shard served no read
// for 2.7–3.4 s and 9–13 reads failed (EOF, connection reset), each after
// 0.5–0.9 s of retries. go-redis marks a failed node itself and lost no
// read. With replicaRouter the same drill loses no read and the shard's
// longest gap between successful reads is ~12 ms (one failed attempt on the
// dead replica, retried on the primary at once).
//
// (In that measurement the reads were not even served by the replica, only
// sent to it first: see readOnlyDial.)
//
// replicaRouter closes that gap with two public valkey-go hooks:
//   - ReadNodeSelector picks, for each read, a replica of the slot that is
//     not cooling down, or the primary (index 0) when every replica is; it
//     remembers the pick per slot.
//   - RetryDelay is called before valkey-go retries a failed retryable
//     command. For a read whose pick was a replica and whose error says the
//     replica is gone (a network error, or LOADING from a replica still
//     loading its data after a restart), it puts that replica in a cool-down
//     and asks for an immediate retry, which the selector sends to the
//     primary. Writes are never retryable (Pool.Do builds them with Build,
//     not ReadOnly), so only reads are re-sent.
//
// A read that runs out of its deadline on a replica (a hung, not a dead,
// node: nothing is retried) also cools that replica, so the following reads
// go to the primary at once instead of each paying a timeout.
type replicaRouter struct {
	coolDown time.Duration

	mu   sync.RWMutex
	down map[string]time.Time // replica address → end of its cool-down

	// picked is the replica the selector last chose per slot, nil when it
	// chose the primary. Concurrent reads of one slot pick the same replica
	// (the choice is stable per slot while the cool-downs do not change), so
	// a failure is charged to the replica that served it.
	picked [1 << 14]atomic.Pointer[string]
}

// replicaCoolDown is how long a replica that failed a read gets no reads.
// NOTE: half the fixtures' 2 s cluster-node-timeout: a replica that is still
// dead when it ends costs one fast failure per slot, retried on the primary
// at once; a replica back before the cluster failed it gets its reads back
// within a second. (One the cluster failed has left valkey-go's slot map and
// returns only with its next topology refresh.)
const replicaCoolDown = time.Second

func newReplicaRouter(coolDown time.Duration) *replicaRouter {
	return &replicaRouter{coolDown: coolDown, down: map[string]time.Time{}}
}

// selectNode is the ReadNodeSelector: nodes[0] is the slot's primary, the
// rest its replicas (valkey-go cluster.go _pick).
func (r *replicaRouter) selectNode(slot uint16, nodes []valkey.NodeInfo) int {
	now := time.Now()
	r.mu.RLock()
	healthy := 0
	for i := 1; i < len(nodes); i++ {
		if !r.coolingLocked(nodes[i].Addr, now) {
			healthy++
		}
	}
	pick := 0
	if healthy > 0 {
		// Stable per slot, spread over the slots like valkey-go's default
		// selector (a random replica fixed per slot at each refresh).
		k := int(slot) % healthy
		for i := 1; i < len(nodes); i++ {
			if r.coolingLocked(nodes[i].Addr, now) {
				continue
			}
			if k == 0 {
				pick = i
				break
			}
			k--
		}
	}
	r.mu.RUnlock()
	if int(slot) < len(r.picked) {
		if pick == 0 {
			r.picked[slot].Store(nil)
		} else {
			addr := nodes[pick].Addr
			r.picked[slot].Store(&addr)
		}
	}
	return pick
}

func (r *replicaRouter) coolingLocked(addr string, now time.Time) bool {
	until, ok := r.down[addr]
	return ok && now.Before(until)
}

// replicaFailed cools down the replica last picked for slot and reports
// whether there was one (false when the read had gone to the primary).
func (r *replicaRouter) replicaFailed(slot uint16) bool {
	if int(slot) >= len(r.picked) {
		return false
	}
	addr := r.picked[slot].Load()
	if addr == nil {
		return false
	}
	r.mu.Lock()
	r.down[*addr] = time.Now().Add(r.coolDown)
	r.mu.Unlock()
	return true
}

// retryDelay is valkey-go's RetryDelay: an immediate retry for a read whose
// replica just failed (the selector now sends it to the primary), valkey-go's
// own backoff for everything else.
func (r *replicaRouter) retryDelay(attempts int, cmd valkey.Completed, err error) time.Duration {
	if cmd.IsReadOnly() && replicaGone(err) && r.replicaFailed(cmd.Slot()) {
		return 0
	}
	return valkeyGoBackoff(attempts)
}

// readTimedOut is called by Pool.Do when a replica-routed read failed
// without a server reply and was not retried (its deadline ran out).
func (r *replicaRouter) readTimedOut(slot uint16, err error) {
	if replicaGone(err) && !errors.Is(err, context.Canceled) {
		r.replicaFailed(slot)
	}
}

// replicaGone reports an error that says the node that served a read is
// unusable, not that the read or its slot is wrong: any error without a
// server reply, and LOADING (a restarted replica loading its data set).
func replicaGone(err error) bool {
	if err == nil || valkey.IsValkeyNil(err) {
		return false
	}
	if ve, ok := valkey.IsValkeyErr(err); ok {
		return ve.IsLoading()
	}
	return true
}

// valkeyGoBackoff mirrors valkey-go's unexported defaultRetryDelayFn
// (retry.go, v1.0.79), which a RetryDelay hook replaces: "equal jitter"
// exponential backoff in microseconds, capped at one second.
func valkeyGoBackoff(attempts int) time.Duration {
	base := 1 << min(20, attempts)
	return min(time.Second, time.Duration(base+rand.IntN(base))*time.Microsecond)
}

// Spec 000 §Client Architecture: a pool that reads from replicas must reach
// them. valkey-go v1.0.79 sends READONLY only on connections it opens for
// an address its slot map names as a replica (cluster.go _refresh, rOpt),
// and keeps every connection it already has: one opened for a seed
// (ClientOption.InitAddress) or for a node that was a primary when it was
// opened has no READONLY, so a replica answers each read on it with MOVED
// and valkey-go follows that to the primary. Measured on the fixtures' 3×1
// seeded with every node's address: a ReplicaReads pool's 50 GETs were all
// rejected by the replica (INFO commandstats rejected_calls=50, calls=0) —
// no read was served by a replica, yet every read still went through the
// replica first, so it failed when the replica died.
//
// readOnlyDial sends READONLY on every connection, before valkey-go's own
// handshake, as valkey-swift does (valkey-io/valkey-swift#317): it lets a
// replica serve reads and does nothing on a primary. When the pool
// authenticates, AUTH goes first (valkey-go's HELLO AUTH re-authenticates
// the same user afterwards). An error reply leaves the connection as
// valkey-go would have had it; only an I/O error fails the dial.
func readOnlyDial(o Options) func(context.Context, string, *net.Dialer, *tls.Config) (net.Conn, error) {
	return func(ctx context.Context, dst string, d *net.Dialer, tlsCfg *tls.Config) (net.Conn, error) {
		var conn net.Conn
		var err error
		// valkey-go's own dial (valkey.go dial), which a DialCtxFn replaces.
		if tlsCfg != nil {
			conn, err = (&tls.Dialer{NetDialer: d, Config: tlsCfg}).DialContext(ctx, "tcp", dst)
		} else {
			conn, err = d.DialContext(ctx, "tcp", dst)
		}
		if err != nil {
			return nil, err
		}
		if err := sendReadOnly(ctx, conn, d.Timeout, o.Username, o.Password); err != nil {
			conn.Close()
			return nil, fmt.Errorf("readonly %s: %w", dst, err)
		}
		return conn, nil
	}
}

// sendReadOnly runs [AUTH] READONLY on a fresh connection (RESP2, the
// protocol before HELLO) and reads their replies. Nothing else arrives
// before valkey-go's HELLO, so the buffered reader holds no bytes of it.
func sendReadOnly(ctx context.Context, conn net.Conn, timeout time.Duration, user, pass string) error {
	deadline := time.Now().Add(cmp(timeout, valkey.DefaultDialTimeout))
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	var cmds [][]string
	switch {
	case pass != "" && user != "":
		cmds = append(cmds, []string{"AUTH", user, pass})
	case pass != "":
		cmds = append(cmds, []string{"AUTH", pass})
	}
	cmds = append(cmds, []string{"READONLY"})
	var b strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(c))
		for _, a := range c {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	for range cmds {
		// +OK or -ERR/-NOAUTH/-WRONGPASS: simple one-line replies.
		if _, err := r.ReadString('\n'); err != nil {
			return err
		}
	}
	return conn.SetDeadline(time.Time{})
}

// cmp is d, or def when d is not positive.
func cmp(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
