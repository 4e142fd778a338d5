package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/slotgate/slotgate/impl/client"
)

// CrashPoint is where an archiver can be made to die abruptly (the harness's
// kill switch; see ArchiverOptions.Crash).
type CrashPoint string

const (
	// CrashBeforeWrite: the entry was read (it is in this consumer's
	// pending list) and nothing was written yet.
	CrashBeforeWrite CrashPoint = "read/before-write"
	// CrashBeforeAck: the PostgreSQL transaction committed and the XACK was
	// not sent.
	CrashBeforeAck CrashPoint = "written/before-ack"
)

// ArchiverOptions configures an Archiver.
type ArchiverOptions struct {
	// Dial opens the command pool of one tenant loop. Each loop has its
	// own: XREADGROUP … BLOCK holds its connection for the block time, and
	// valkey-go multiplexes every Pool.Do to a node on one pipelined
	// connection (the seam cannot mark a command blocking), so a shared
	// pool would stall every other command behind the block.
	Dial func(ctx context.Context) (client.Pool, error)
	// PostgresDSN is the PG audit store; Schema its schema ("" = public).
	PostgresDSN string
	Schema      string
	// Tenants are the streams to archive (per-tenant config, like the
	// queue's: a cluster cannot be scanned for them reliably).
	Tenants []string
	// Group is the consumer group (default DefaultGroup); Consumer names
	// this archiver incarnation and must be unique per process start, so a
	// successor can tell its own pending entries from a dead one's.
	Group, Consumer string
	// Targets are the table sets written; at least one.
	Targets Targets
	// Block is XREADGROUP's BLOCK (default 500 ms). The spec's BLOCK 0
	// never returns on an idle stream; a finite block lets the loop claim
	// dead consumers' entries and stop cleanly. Keep it under the client's
	// read timeout (go-redis: 3 s). A departure from §4.2's "BLOCK 0"
	// that costs one empty read per Block on an idle stream and nothing in
	// latency: a block returns as soon as an XADD lands.
	Block time.Duration
	// ClaimMinIdle is how long an entry must sit in another consumer's
	// pending list before it is claimed (default 30 s); ClaimEvery how
	// often the pending list is scanned (default 1 s).
	ClaimMinIdle, ClaimEvery time.Duration
	// Timeout bounds one Redis command (beyond Block) and one PostgreSQL
	// transaction (default 5 s); RetryMin/RetryMax the backoff (10 ms,
	// 250 ms).
	Timeout, RetryMin, RetryMax time.Duration
	// Metrics receives lag, errors, archived and recovered counts (a
	// private registry when nil).
	Metrics *Metrics
	// OnError, if set, is told about every counted error.
	OnError func(PipelineError)
	// Mutant selects a known-bad variant (negative controls only).
	Mutant Mutant
	// Crash, if set, is asked at each CrashPoint; true makes the archiver
	// die there (Run returns ErrCrashed).
	Crash func(p CrashPoint, tenant, signalID string) bool
}

// Archiver is the PG archiver (spec 002 §4.2): a consumer of every tenant's
// Marconi Cache stream that writes each entry to PostgreSQL as soon as it is
// read — XREADGROUP COUNT 1, no batching — with an idempotent UPSERT on
// signal_id, and acknowledges it only after the commit. Entries a dead
// archiver left pending are claimed (XAUTOCLAIM) and written again, which
// the UPSERT makes harmless.
type Archiver struct {
	o ArchiverOptions
}

// NewArchiver validates o and fills its defaults.
func NewArchiver(o ArchiverOptions) (*Archiver, error) {
	switch {
	case o.Dial == nil || o.PostgresDSN == "":
		return nil, fmt.Errorf("new archiver: dial and postgres dsn are required: %w", ErrBadConfig)
	case o.Consumer == "":
		return nil, fmt.Errorf("new archiver: a consumer name is required: %w", ErrBadConfig)
	case !o.Targets.Shadow && !o.Targets.Primary:
		return nil, fmt.Errorf("new archiver: no target tables (MARCONI_PG_ARCHIVER_SHADOW and _PRIMARY both off): %w", ErrBadConfig)
	}
	for _, t := range o.Tenants {
		if err := ValidateTenant(t); err != nil {
			return nil, fmt.Errorf("new archiver: %w", err)
		}
	}
	if o.Group == "" {
		o.Group = DefaultGroup
	}
	if o.Block <= 0 {
		o.Block = 500 * time.Millisecond
	}
	if o.ClaimMinIdle <= 0 {
		o.ClaimMinIdle = 30 * time.Second
	}
	if o.ClaimEvery <= 0 {
		o.ClaimEvery = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 10 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 250 * time.Millisecond
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	return &Archiver{o: o}, nil
}

// Run archives every tenant's stream until ctx ends (nil) or the crash hook
// fires (ErrCrashed: every tenant loop stops where it is, acknowledging
// nothing more).
func (a *Archiver) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// crashed ends at a crash even when ctx had already ended (a stop):
	// the entries other tenants are finishing stop where they are too.
	crashed, crash := context.WithCancel(context.Background())
	defer crash()
	var wg sync.WaitGroup
	for _, t := range a.o.Tenants {
		wg.Go(func() {
			if err := a.runTenant(ctx, crashed, t); errors.Is(err, ErrCrashed) {
				crash()
				cancel(ErrCrashed)
			}
		})
	}
	wg.Wait()
	if crashed.Err() != nil {
		return ErrCrashed
	}
	return nil
}

// streamMsg is one stream entry as XREADGROUP / XAUTOCLAIM return it.
type streamMsg struct {
	ID     string
	Fields map[string]string
	// Deleted: the entry is pending but no longer in the stream (trimmed).
	Deleted bool
}

// tenantArchiver is one tenant loop's state.
type tenantArchiver struct {
	a      *Archiver
	tenant string
	// crashed ends when any tenant loop of the run crashed (Run).
	crashed context.Context
	keys    Keys
	pool    client.Pool
	conn    *pgx.Conn
	b       backoff

	lag                 prometheus.Gauge
	archived, recovered prometheus.Counter
	// readAt is when the entry being archived was taken in hand
	// (MutantLagSinceRead's wrong clock).
	readAt time.Time
}

func (a *Archiver) runTenant(ctx, crashed context.Context, tenant string) error {
	keys, _ := KeysFor(tenant) // validated in NewArchiver
	m := a.o.Metrics
	ta := &tenantArchiver{
		a: a, tenant: tenant, keys: keys, b: backoff{min: a.o.RetryMin, max: a.o.RetryMax}, crashed: crashed,
		lag: m.archiverLag.WithLabelValues(tenant), archived: m.archived.WithLabelValues(tenant), recovered: m.recovered.WithLabelValues(tenant),
	}
	defer ta.close()
	for ta.pool == nil {
		p, err := a.o.Dial(ctx)
		if err == nil {
			ta.pool = p
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		ta.report("connect", err)
		sleep(ctx, ta.b.next())
	}
	if !ta.retry(ctx, "group", ta.ensureGroup) {
		return nil
	}

	ownCursor, ownDone := "0", false
	claimCursor, nextClaim := "0-0", time.Time{}
	for ctx.Err() == nil {
		var msgs []streamMsg
		var err error
		var op string
		recovered := false
		switch {
		case !ownDone:
			// A consumer restarted under its own name first finishes what
			// it had read before it died.
			op = "read"
			msgs, err = ta.read(ctx, ownCursor, false)
			if err == nil {
				ownDone = len(msgs) == 0
				if !ownDone {
					ownCursor, recovered = msgs[len(msgs)-1].ID, true
				}
			}
		case a.o.Mutant != MutantNoRecovery && !time.Now().Before(nextClaim):
			op = "claim"
			var next string
			msgs, next, err = ta.claim(ctx, claimCursor)
			if err == nil {
				claimCursor, recovered = next, true
				if next == "0-0" {
					nextClaim = time.Now().Add(a.o.ClaimEvery)
				}
			}
		default:
			op = "read"
			msgs, err = ta.read(ctx, ">", a.o.Mutant != MutantPollOnly)
			if err == nil && len(msgs) == 0 {
				ta.lag.Set(0)
				if a.o.Mutant == MutantPollOnly {
					sleep(ctx, a.o.Block) // the poll interval: nothing wakes it sooner
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			ta.report(op, err)
			if errorCode(err) == "NOGROUP" { // the stream was deleted under us
				ta.retry(ctx, "group", ta.ensureGroup)
			}
			sleep(ctx, ta.b.next())
			continue
		}
		ta.b.reset()
		for _, msg := range msgs {
			if ctx.Err() != nil {
				break // stopping: what was not taken in hand stays pending for the next archiver
			}
			if recovered {
				ta.recovered.Inc()
			}
			hand, done := ta.inHand(ctx)
			err := ta.archive(hand, msg)
			done()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// inHand is the context an entry taken in hand finishes on. A stop (ctx
// ends: a §8 flag flip restarts the archiver on the other table set, a
// rollout stops the pod) lets the entry finish its write and its ack for up
// to Timeout. An entry written but not acknowledged is claimed by the
// archiver that takes over and written again — after a shadow→primary flip
// into the other tables, where the UPSERT on signal_id cannot make it
// harmless (the stage-flags row caught one archived in both). A crash
// (ErrCrashed) still stops every loop where it is, also after a stop.
func (ta *tenantArchiver) inHand(ctx context.Context) (context.Context, context.CancelFunc) {
	hand, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopCrash := context.AfterFunc(ta.crashed, cancel) // a crash, even after a stop, stops it where it is
	var mu sync.Mutex
	var grace *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		grace = time.AfterFunc(ta.a.o.Timeout, cancel)
	})
	return hand, func() {
		stop()
		stopCrash()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// archive writes one entry and acknowledges it after the commit.
func (ta *tenantArchiver) archive(ctx context.Context, msg streamMsg) error {
	a := ta.a
	if msg.Deleted {
		// §4.2 Recoverability: trimmed before it was archived — the audit
		// gap, loud. Acknowledged so it stops being retried.
		ta.report("trimmed", fmt.Errorf("stream entry %s of %s was trimmed before it was archived", msg.ID, ta.keys.Stream))
		ta.retry(ctx, "ack", func(ctx context.Context) error { return ta.ack(ctx, msg.ID) })
		return nil
	}
	var e Entry
	if err := json.Unmarshal([]byte(msg.Fields["entry"]), &e); err != nil {
		ta.report("decode", fmt.Errorf("stream entry %s of %s: %w", msg.ID, ta.keys.Stream, err))
		ta.retry(ctx, "ack", func(ctx context.Context) error { return ta.ack(ctx, msg.ID) })
		return nil
	}
	sid := e.Envelope.SignalID
	ta.readAt = time.Now()
	if a.o.Mutant == MutantAckBeforeWrite && !ta.retry(ctx, "ack", func(ctx context.Context) error { return ta.ack(ctx, msg.ID) }) {
		return nil
	}
	if a.o.Crash != nil && a.o.Crash(CrashBeforeWrite, ta.tenant, sid) {
		return ErrCrashed
	}
	written := ta.retry(ctx, "write", func(ctx context.Context) error {
		ta.publishLag(msg.ID)
		return ta.write(ctx, e)
	})
	if !written {
		return nil // stopping: the entry stays pending for the next archiver
	}
	if a.o.Crash != nil && a.o.Crash(CrashBeforeAck, ta.tenant, sid) {
		return ErrCrashed
	}
	if a.o.Mutant != MutantAckBeforeWrite && !ta.retry(ctx, "ack", func(ctx context.Context) error { return ta.ack(ctx, msg.ID) }) {
		return nil
	}
	ta.archived.Inc()
	ta.publishLag(msg.ID)
	return nil
}

// retry runs f until it succeeds (true) or ctx ends (false), counting and
// reporting every failure under op.
func (ta *tenantArchiver) retry(ctx context.Context, op string, f func(context.Context) error) bool {
	ta.b.reset()
	for {
		err := f(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		ta.report(op, err)
		if !sleep(ctx, ta.b.next()) {
			return false
		}
	}
}

func (ta *tenantArchiver) ensureGroup(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, ta.a.o.Timeout)
	defer cancel()
	// From "0": whatever the stream already holds is archived too.
	_, err := ta.pool.Do(cctx, client.Cmd{Prefix: []string{"XGROUP", "CREATE"}, Keys: []string{ta.keys.Stream}, Args: []string{ta.a.o.Group, "0", "MKSTREAM"}})
	if errorCode(err) == "BUSYGROUP" {
		return nil
	}
	return err
}

// read is XREADGROUP COUNT 1: id ">" for new entries (blocking), "0"-style
// ids for this consumer's own pending list (not blocking).
func (ta *tenantArchiver) read(ctx context.Context, id string, block bool) ([]streamMsg, error) {
	o := ta.a.o
	count := "1" // §4.2: COUNT 1, no batching
	if o.Mutant == MutantBatchedRead {
		count = "16"
	}
	prefix := []string{"XREADGROUP", "GROUP", o.Group, o.Consumer, "COUNT", count}
	timeout := o.Timeout
	if block {
		prefix = append(prefix, "BLOCK", strconv.FormatInt(o.Block.Milliseconds(), 10))
		timeout += o.Block
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reply, err := ta.pool.Do(cctx, client.Cmd{Prefix: append(prefix, "STREAMS"), Keys: []string{ta.keys.Stream}, Args: []string{id}})
	if err != nil {
		return nil, fmt.Errorf("xreadgroup %s: %w", ta.keys.Stream, err)
	}
	return parseReadReply(reply)
}

// claim is XAUTOCLAIM COUNT 1 of entries idle longer than ClaimMinIdle in
// any consumer's pending list — a dead archiver's (§4.2 pending-entry
// recovery). Entries that were trimmed meanwhile come back as Deleted.
func (ta *tenantArchiver) claim(ctx context.Context, cursor string) ([]streamMsg, string, error) {
	o := ta.a.o
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	reply, err := ta.pool.Do(cctx, client.Cmd{Prefix: []string{"XAUTOCLAIM"}, Keys: []string{ta.keys.Stream},
		Args: []string{o.Group, o.Consumer, strconv.FormatInt(o.ClaimMinIdle.Milliseconds(), 10), cursor, "COUNT", "1"}})
	if err != nil {
		return nil, cursor, fmt.Errorf("xautoclaim %s: %w", ta.keys.Stream, err)
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) < 2 {
		return nil, cursor, fmt.Errorf("xautoclaim %s: reply %v: %w", ta.keys.Stream, reply, client.ErrUnexpectedReply)
	}
	next, err := client.AsString(arr[0])
	if err != nil {
		return nil, cursor, fmt.Errorf("xautoclaim %s cursor: %w", ta.keys.Stream, err)
	}
	msgs, err := parseEntries(arr[1])
	if err != nil {
		return nil, cursor, fmt.Errorf("xautoclaim %s: %w", ta.keys.Stream, err)
	}
	if len(arr) > 2 {
		deleted, _ := arr[2].([]any)
		for _, d := range deleted {
			if id, err := client.AsString(d); err == nil {
				msgs = append(msgs, streamMsg{ID: id, Deleted: true})
			}
		}
	}
	return msgs, next, nil
}

func (ta *tenantArchiver) ack(ctx context.Context, id string) error {
	cctx, cancel := context.WithTimeout(ctx, ta.a.o.Timeout)
	defer cancel()
	if _, err := ta.pool.Do(cctx, client.NewCmd("XACK", []string{ta.keys.Stream}, ta.a.o.Group, id)); err != nil {
		return fmt.Errorf("xack %s %s: %w", ta.keys.Stream, id, err)
	}
	return nil
}

// write commits e to every target table set in one transaction.
func (ta *tenantArchiver) write(ctx context.Context, e Entry) error {
	o := ta.a.o
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if ta.conn == nil || ta.conn.IsClosed() {
		conn, err := connectPG(cctx, o.PostgresDSN, o.Schema)
		if err != nil {
			return err
		}
		ta.conn = conn
	}
	if err := commitEntry(cctx, ta.conn, o.Targets.tableSets(), e, o.Mutant != MutantPlainInsert); err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) { // a broken link: reconnect next time
			_ = ta.conn.Close(context.Background())
			ta.conn = nil
		}
		return fmt.Errorf("archive %s: %w", e.Envelope.SignalID, err)
	}
	return nil
}

// publishLag sets the lag gauge to the age of stream entry id (its ID's
// millisecond part is the server time of the XADD).
func (ta *tenantArchiver) publishLag(id string) {
	if ta.a.o.Mutant == MutantLagSinceRead {
		ta.lag.Set(time.Since(ta.readAt).Seconds())
		return
	}
	ms, _, _ := strings.Cut(id, "-")
	if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
		ta.lag.Set(max(0, time.Since(time.UnixMilli(n)).Seconds()))
	}
}

func (ta *tenantArchiver) report(op string, err error) {
	reason := errorReason(err)
	if op == "trimmed" {
		reason = "trimmed"
	}
	ta.a.o.Metrics.archiverErrors.WithLabelValues(ta.tenant, reason).Inc()
	if ta.a.o.OnError != nil {
		ta.a.o.OnError(PipelineError{At: time.Now(), Stage: StageArchiver, Tenant: ta.tenant, Op: op, Reason: reason, Err: err.Error()})
	}
}

func (ta *tenantArchiver) close() {
	if ta.pool != nil {
		_ = ta.pool.Close()
	}
	if ta.conn != nil {
		_ = ta.conn.Close(context.Background())
	}
}

// errorCode is a server error reply's code (its first word), e.g.
// BUSYGROUP, which client.ErrorKind does not enumerate.
func errorCode(err error) string {
	var se *client.ServerError
	if !errors.As(err, &se) {
		return ""
	}
	code, _, _ := strings.Cut(se.Msg, " ")
	return code
}

// parseReadReply reads XREADGROUP's reply for one stream: RESP2 is
// [[name, entries]], RESP3 a map name → entries; nil when BLOCK timed out.
func parseReadReply(reply any) ([]streamMsg, error) {
	switch t := reply.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		for _, entries := range t {
			return parseEntries(entries)
		}
		return nil, nil
	case []any:
		if len(t) == 0 {
			return nil, nil
		}
		pair, ok := t[0].([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("xreadgroup reply %v: %w", reply, client.ErrUnexpectedReply)
		}
		return parseEntries(pair[1])
	}
	return nil, fmt.Errorf("xreadgroup reply %T: %w", reply, client.ErrUnexpectedReply)
}

// parseEntries reads a list of [id, [field, value, …]] stream entries; an
// entry whose fields are nil was deleted from the stream while pending.
func parseEntries(v any) ([]streamMsg, error) {
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("stream entries %T: %w", v, client.ErrUnexpectedReply)
	}
	out := make([]streamMsg, 0, len(list))
	for _, raw := range list {
		pair, ok := raw.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("stream entry %v: %w", raw, client.ErrUnexpectedReply)
		}
		id, err := client.AsString(pair[0])
		if err != nil {
			return nil, fmt.Errorf("stream entry id: %w", err)
		}
		if pair[1] == nil {
			out = append(out, streamMsg{ID: id, Deleted: true})
			continue
		}
		fields := map[string]string{}
		switch f := pair[1].(type) {
		case []any:
			for i := 0; i+1 < len(f); i += 2 {
				k, _ := client.AsString(f[i])
				val, _ := client.AsString(f[i+1])
				fields[k] = val
			}
		case map[string]any:
			for k, x := range f {
				fields[k], _ = client.AsString(x)
			}
		default:
			return nil, fmt.Errorf("stream entry %s fields %T: %w", id, pair[1], client.ErrUnexpectedReply)
		}
		out = append(out, streamMsg{ID: id, Fields: fields})
	}
	return out, nil
}
