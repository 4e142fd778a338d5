package marconi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotgate/slotgate/impl/client"
)

// Mutant names a known-bad mesh variant: a negative control that the
// checkers must catch (like impl/fencing's mutants). MutantNone is the
// correct mesh.
type Mutant string

const (
	MutantNone Mutant = ""
	// MutantPublishBeforeAck keeps the legacy §2.2 bus on the send path:
	// the envelope is PUBLISHed on the recipient's Redis session channel
	// before the 200 — while MARCONI_HOT_PATH_SEND is on. Delivery itself
	// is unchanged, so only I/O accounting (and a Redis outage) tells.
	MutantPublishBeforeAck Mutant = "publish-before-ack"
	// MutantSyncPGWrite keeps the legacy synchronous PostgreSQL INSERT in
	// send_signal (what §8 Stage 5 removes). Needs Options.LegacyPG.
	MutantSyncPGWrite Mutant = "sync-pg-write"
	// MutantForgetfulDeregister: on_deregister drops the registration but
	// forgets routing.invalidate_project — the route keeps pointing at
	// the dead session.
	MutantForgetfulDeregister Mutant = "forgetful-deregister"
	// MutantSkipWarmup: Start does not rehydrate the tables from the
	// SessionStore (§6 step 2 skipped).
	MutantSkipWarmup Mutant = "skip-warmup"
	// MutantStaticListener is the keyspace listener that subscribes to the
	// primaries it was given (or found) at Start, configures only them and
	// never looks again: after a failover the promoted primary announces
	// its expiries to nobody, and on_session_expired silently stops (§5).
	MutantStaticListener Mutant = "static-keyspace-listener"
	// MutantStaleRoute5xx is the mesh that notices a dead route too late:
	// on_deregister forgets routing.invalidate_project (as the forgetful
	// mutant), and send_signal, finding the route's session no longer
	// registered, answers 500 instead of queuing the signal offline for
	// the identity (§3.5). Nothing is routed to the dead session — only
	// a send answered with an error tells.
	MutantStaleRoute5xx Mutant = "stale-route-5xx"
	// MutantAcceptForbidden skips the flag rules (FlagRules) at New and at
	// SetFlags: it starts, and flips to, combinations spec 002 §8 forbids
	// — Stage 5 without the archiver primary, table reads without the
	// Stage 2 hooks, shadow and primary together.
	MutantAcceptForbidden Mutant = "accept-forbidden-flags"
	// MutantStaleFallback is the Stage 1 fallback that is no fallback: with
	// MARCONI_ROUTING_TABLE_READS / MARCONI_REGISTRATION_TABLE_READS off it
	// still resolves from the process-local table, which misses whatever
	// changed in the SessionStore without passing through this process's
	// hooks — it routes to a stale session.
	MutantStaleFallback Mutant = "stale-fallback"
	// MutantRollbackDrops is the rollback that starts clean: whenever
	// SetFlags turns a flag off, the pending-signal index (§3.5) is
	// dropped — signals accepted with 200 queued_offline are lost.
	MutantRollbackDrops Mutant = "rollback-drops-pending"
	// MutantSweeperNeverFires: the SLA sweeper runs but never raises a
	// violation (§3.4 "SLA sweepers operate on the in-memory map").
	MutantSweeperNeverFires Mutant = "sla-sweeper-never-fires"
	// MutantSweeperEarly: the SLA sweeper raises a violation at half the
	// SLA — an obligation acked on time is reported violated.
	MutantSweeperEarly Mutant = "sla-sweeper-early"
	// MutantForgetObligations: a restarted instance does not rehydrate the
	// obligation index from the Marconi Cache stream; open obligations of
	// the previous instance are forgotten (their acks answer 404, their
	// SLAs are never swept).
	MutantForgetObligations Mutant = "obligations-forgotten-on-restart"
	// MutantDurableAtOffer: an obligation is marked durable (and counted in
	// marconi_obligations_durable_total) when the in-memory audit queue
	// takes its envelope, before the Redis Stream — the durable boundary
	// (§4.1) — has it; what the queue then loses is claimed durable.
	MutantDurableAtOffer Mutant = "durable-at-offer"
	// MutantWSSubscribe is the legacy session_stream handler kept beside
	// the Marconi attach (§2.2, §8 Stage 5 exit: "WS handler does not
	// subscribe to Redis pubsub when Marconi-attached"): every attached
	// socket also SUBSCRIBEs its session channel, through
	// Options.LegacySubscriber, until it detaches. Delivery is unchanged.
	MutantWSSubscribe Mutant = "ws-subscribe-when-attached"
	// MutantEngagementInvalidates: stamp_engagement invalidates the
	// session's entry instead of updating its freshness (§5: "cheap field
	// update; does not invalidate the entire entry") — the WS handle is
	// dropped, the socket closes, and sends queue offline until the shim
	// reconnects.
	MutantEngagementInvalidates Mutant = "engagement-invalidates"
	// MutantReleaseKeepsIndex: SessionStore.release deletes the session
	// record but leaves its member in the tenant's session index (the
	// ZREM of release.lua forgotten). No route changes — every reader
	// skips a member whose record is gone — so only a read of the index
	// shows the dead member it keeps until its score lapses.
	MutantReleaseKeepsIndex Mutant = "release-keeps-index"
	// MutantPutBackToIdentity is the put-back before its fix
	// (docs/FINDINGS.md, "put-back"): what a closed socket had not written
	// goes back under the closing session's identity instead of the
	// recipient each signal was addressed to (§3.5: the pending index is
	// per recipient). A master-alias signal left in the old master's
	// socket then waits for — and reaches — the next session of the old
	// master's identity, which is not master.
	MutantPutBackToIdentity Mutant = "put-back-to-identity"
	// MutantFlagDefaultOn is the flag reader (FlagsFromEnvAs) that reads an
	// unset MARCONI_ROUTING_TABLE_READS as ON, as if Stage 2 had already
	// exited: a deployment that sets no flag skips the Stage 1
	// SessionStore-read fallback it was promised (§8: every flag defaults
	// OFF).
	MutantFlagDefaultOn Mutant = "flag-default-on"
	// MutantPendingNeverExpires is a pending index whose TTL never fires
	// (§3.5 "per-recipient queue of undelivered signals + TTL"): a signal
	// waits, and is drained, however old.
	MutantPendingNeverExpires Mutant = "pending-never-expires"
	// MutantPendingExpiryUncounted is a pending index that drops signals
	// at their TTL without counting them in marconi_pending_expired_total:
	// accepted signals vanish and the operator is not told.
	MutantPendingExpiryUncounted Mutant = "pending-expiry-uncounted"
)

// ErrStaleRoute is MutantStaleRoute5xx's answer to a send whose route
// names a session that is no longer registered (HTTP 500).
var ErrStaleRoute = errors.New("route names a session that is no longer registered")

// Mutants lists every mesh mutant.
var Mutants = []Mutant{MutantPublishBeforeAck, MutantSyncPGWrite, MutantForgetfulDeregister, MutantSkipWarmup, MutantStaticListener, MutantStaleRoute5xx,
	MutantAcceptForbidden, MutantStaleFallback, MutantRollbackDrops,
	MutantSweeperNeverFires, MutantSweeperEarly, MutantForgetObligations, MutantDurableAtOffer, MutantWSSubscribe, MutantEngagementInvalidates,
	MutantReleaseKeepsIndex, MutantPutBackToIdentity, MutantFlagDefaultOn, MutantPendingNeverExpires, MutantPendingExpiryUncounted,
	MutantSweeperOffByOne, MutantSweeperIndexRefires, MutantTakeoverSkipsHook, MutantMasterUncached, MutantExpiryErrorsUncounted}

// LegacyChannel is the legacy per-session Redis pub/sub channel (§2.2:
// "the sender thread does PUBLISH session_channel").
func LegacyChannel(prefix, sessionID string) string { return prefix + ":session:" + sessionID }

// legacyPath is the I/O the legacy send path does before its 200: a Redis
// PUBLISH (MARCONI_HOT_PATH_SEND off, or MutantPublishBeforeAck) and/or a
// synchronous PostgreSQL INSERT (MutantSyncPGWrite). It runs beside the
// board, never inside it.
type legacyPath struct {
	pool   client.Pool // the publish's pool (used when the send asks for it)
	pg     PGExecer    // nil: no synchronous INSERT
	pgMu   sync.Mutex  // a *pgx.Conn is not safe for concurrent use
	prefix string
}

// PGExecer is what the legacy synchronous write needs of PostgreSQL: a
// *pgx.Conn (or a pool).
type PGExecer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func (l *legacyPath) exec(ctx context.Context, sql string, args ...any) error {
	l.pgMu.Lock()
	defer l.pgMu.Unlock()
	_, err := l.pg.Exec(ctx, sql, args...)
	return err
}

// legacyTable is where the synchronous INSERT goes: its own table, so the
// mutant never touches the audit archiver's signal_queue.
const legacyTable = "marconi_legacy_send"

func (l *legacyPath) prepare(ctx context.Context) error {
	if l.pg == nil {
		return nil
	}
	if err := l.exec(ctx, `CREATE TABLE IF NOT EXISTS `+legacyTable+` (signal_id text PRIMARY KEY, tenant_id text NOT NULL, envelope jsonb NOT NULL)`); err != nil {
		return fmt.Errorf("legacy path: create %s: %w", legacyTable, err)
	}
	return nil
}

// before runs the legacy I/O for a send, ahead of its delivery decision:
// a failure fails the send, as it did on the legacy path. sessionID is the
// session the route resolves to (the legacy channel is per session: no
// session, nothing to publish); id names the legacy row.
func (l *legacyPath) before(ctx context.Context, req SendRequest, sessionID, id string, publish bool) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("legacy path: encode: %w", err)
	}
	if publish && sessionID != "" {
		cmd := client.Cmd{Prefix: []string{"PUBLISH", LegacyChannel(l.prefix, sessionID)}, Args: []string{string(body)}}
		if _, err := l.pool.Do(ctx, cmd); err != nil {
			return fmt.Errorf("legacy path: publish: %w", err)
		}
	}
	if l.pg != nil {
		if err := l.exec(ctx, `INSERT INTO `+legacyTable+` (signal_id, tenant_id, envelope) VALUES ($1, $2, $3) ON CONFLICT (signal_id) DO NOTHING`,
			id, req.Tenant, body); err != nil {
			return fmt.Errorf("legacy path: insert: %w", err)
		}
	}
	return nil
}
