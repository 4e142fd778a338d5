package audit

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// tableSet names the three physical tables one writer fills (spec 002 §0.1).
type tableSet struct {
	Queue, Trace, Obligations string
}

var (
	canonicalTables = tableSet{Queue: "signal_queue", Trace: "signal_trace_events", Obligations: "signal_obligations"}
	shadowTables    = tableSet{Queue: "signal_queue_shadow", Trace: "signal_trace_events_shadow", Obligations: "signal_obligations_shadow"}
)

// Table names, for readers of the audit store.
const (
	TableQueue             = "signal_queue"
	TableTraceEvents       = "signal_trace_events"
	TableObligations       = "signal_obligations"
	TableQueueShadow       = "signal_queue_shadow"
	TableTraceEventsShadow = "signal_trace_events_shadow"
	TableObligationsShadow = "signal_obligations_shadow"
)

// MigrateOptions configures Migrate.
type MigrateOptions struct {
	// Schema is the PostgreSQL schema that holds the tables (created if
	// missing); "" means public.
	Schema string
	// Mutant MutantPlainInsert drops the unique keys of the *_shadow
	// tables — the ones its archiver writes in shadow mode — so it can
	// double-insert silently; the canonical tables keep theirs for the
	// legacy direct write's UPSERT.
	Mutant Mutant
	// Primary: the archiver runs in primary mode without the legacy direct
	// write (Stage 4 after the flip), so MutantPlainInsert drops the
	// canonical tables' unique keys as well.
	Primary bool
}

// Migrate applies the embedded migrations (migrations/NNN_*.sql) that the
// schema has not recorded yet, each in its own transaction under an
// advisory lock, so concurrent or repeated calls are harmless.
func Migrate(ctx context.Context, dsn string, o MigrateOptions) error {
	conn, err := connectPG(ctx, dsn, "")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close(context.Background())
	schema := o.Schema
	if schema == "" {
		schema = "public"
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	ident := pgx.Identifier{schema}.Sanitize()
	for _, name := range names {
		version, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, "migrations/"), "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migrate: migration %s has no version prefix", name)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			stmts := []string{
				"SELECT pg_advisory_xact_lock(hashtext('marconi-audit-migrate'))",
				"CREATE SCHEMA IF NOT EXISTS " + ident,
				"SET LOCAL search_path TO " + ident,
				"CREATE TABLE IF NOT EXISTS marconi_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
			}
			for _, s := range stmts {
				if _, err := tx.Exec(ctx, s); err != nil {
					return err
				}
			}
			var applied bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM marconi_schema_migrations WHERE version = $1)", version).Scan(&applied); err != nil {
				return err
			}
			if applied {
				return nil
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO marconi_schema_migrations (version) VALUES ($1)", version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s in schema %s: %w", name, schema, err)
		}
	}
	if o.Mutant == MutantPlainInsert {
		tables := []string{TableQueueShadow, TableTraceEventsShadow, TableObligationsShadow}
		if o.Primary {
			tables = append(tables, TableQueue, TableTraceEvents, TableObligations)
		}
		for _, t := range tables {
			q := fmt.Sprintf("ALTER TABLE %s.%s DROP CONSTRAINT IF EXISTS %s", ident, pgx.Identifier{t}.Sanitize(), pgx.Identifier{t + "_pkey"}.Sanitize())
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("migrate: drop unique key of %s: %w", t, err)
			}
		}
	}
	return nil
}

// connectPG opens one connection whose search_path is schema (when set), so
// every statement names the spec's physical tables unqualified.
func connectPG(ctx context.Context, dsn, schema string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse postgres dsn: %w", err)
	}
	if schema != "" {
		cfg.RuntimeParams["search_path"] = schema
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	return conn, nil
}

// commitEntry writes e into every table set in sets with one batch: one
// round trip, and one implicit transaction (pgx SendBatch: "all queries are
// run in an implicit transaction"), so the entry's rows commit together or
// not at all. idempotent selects the reference UPSERT on the unique keys;
// false is MutantPlainInsert's plain INSERT. The archiver and the legacy
// direct write share this one row mapping, so shadow and direct rows can
// only differ by what the stream carried.
func commitEntry(ctx context.Context, conn *pgx.Conn, sets []tableSet, e Entry, idempotent bool) error {
	b := &pgx.Batch{}
	for _, t := range sets {
		queueEntry(b, t, e, idempotent)
	}
	return conn.SendBatch(ctx, b).Close()
}

// queueEntry adds e's rows in table set t to b.
func queueEntry(b *pgx.Batch, t tableSet, e Entry, idempotent bool) {
	env := e.Envelope
	payload := env.Payload
	if payload == nil {
		payload = []byte{}
	}
	var meta any // jsonb NULL when there is nothing: nil and empty maps are one row
	if len(env.Meta) > 0 {
		meta = env.Meta
	}
	b.Queue(upsertSQL(t.Queue, []string{"signal_id", "tenant_id", "project_id", "sender", "recipient", "kind", "payload", "meta", "outcome", "created_at", "arrived_at"}, []string{"signal_id"}, idempotent),
		env.SignalID, env.TenantID, env.ProjectID, env.Sender, env.Recipient, env.Kind, payload, meta, string(e.Outcome), env.CreatedAt, e.ArrivedAt)
	for i, ev := range e.Trace {
		b.Queue(upsertSQL(t.Trace, []string{"signal_id", "seq", "event", "at", "detail"}, []string{"signal_id", "seq"}, idempotent),
			env.SignalID, i, ev.Event, ev.At, ev.Detail)
	}
	if o := env.Obligation; o != nil {
		b.Queue(upsertSQL(t.Obligations, []string{"signal_id", "kind", "ack_sla_seconds", "terminal_sla_seconds", "created_at", "ack_received_at", "terminal_received_at", "durability_status"}, []string{"signal_id"}, idempotent),
			env.SignalID, o.Kind, o.AckSLASeconds, o.TerminalSLASeconds, o.CreatedAt, o.AckReceivedAt, o.TerminalReceivedAt, o.DurabilityStatus)
	}
}

var upsertCache sync.Map // statement text by (table, idempotent)

// setOnce are columns an UPSERT never clears: an obligation's ack times are
// set once in the index (spec 002 §3.4), and the stream carries a signal's
// obligation more than once (its entry, then each ack's handoff). The
// archiver may write an older entry after a newer one — a dead consumer's
// pending entry claimed after the live one archived the handoff — and
// "every column from EXCLUDED" would then erase a recorded ack.
var setOnce = map[string]bool{"ack_received_at": true, "terminal_received_at": true}

// upsertSQL is INSERT … ON CONFLICT (key) DO UPDATE SET every column, or a
// plain INSERT for the non-idempotent mutant.
func upsertSQL(table string, cols, key []string, idempotent bool) string {
	ck := table + "/" + strconv.FormatBool(idempotent)
	if s, ok := upsertCache.Load(ck); ok {
		return s.(string)
	}
	ph := make([]string, len(cols))
	set := make([]string, 0, len(cols))
	for i, c := range cols {
		ph[i] = "$" + strconv.Itoa(i+1)
		switch {
		case slices.Contains(key, c):
		case setOnce[c]:
			set = append(set, c+" = COALESCE(EXCLUDED."+c+", "+table+"."+c+")")
		default:
			set = append(set, c+" = EXCLUDED."+c)
		}
	}
	s := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(ph, ", "))
	if idempotent {
		s += fmt.Sprintf(" ON CONFLICT (%s) DO UPDATE SET %s", strings.Join(key, ", "), strings.Join(set, ", "))
	}
	upsertCache.Store(ck, s)
	return s
}

// DirectWriterOptions configures a DirectWriter.
type DirectWriterOptions struct {
	PostgresDSN string
	Schema      string
	// Timeout bounds one write (default 5 s).
	Timeout time.Duration
}

// DirectWriter is the legacy synchronous PG write of signal_service.py's
// send_signal, which Stages 3 and 4 keep running in parallel with the audit
// fan-out (spec 002 §8, Stage 3 "Both paths produce records in parallel")
// so the shadow archiver can be compared with it byte for byte. It writes
// the canonical tables with the same idempotent UPSERT. Safe for concurrent
// use (one connection, serialised).
type DirectWriter struct {
	o    DirectWriterOptions
	mu   sync.Mutex
	conn *pgx.Conn
}

// NewDirectWriter connects to PostgreSQL.
func NewDirectWriter(ctx context.Context, o DirectWriterOptions) (*DirectWriter, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	conn, err := connectPG(ctx, o.PostgresDSN, o.Schema)
	if err != nil {
		return nil, fmt.Errorf("new direct writer: %w", err)
	}
	return &DirectWriter{o: o, conn: conn}, nil
}

// Write stores e in signal_queue, signal_trace_events and
// signal_obligations in one transaction, reconnecting first if the last
// write broke the connection.
func (d *DirectWriter) Write(ctx context.Context, e Entry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	if d.conn == nil || d.conn.IsClosed() {
		conn, err := connectPG(ctx, d.o.PostgresDSN, d.o.Schema)
		if err != nil {
			return fmt.Errorf("direct write %s: %w", e.Envelope.SignalID, err)
		}
		d.conn = conn
	}
	if err := commitEntry(ctx, d.conn, []tableSet{canonicalTables}, e, true); err != nil {
		return fmt.Errorf("direct write %s: %w", e.Envelope.SignalID, err)
	}
	return nil
}

// Close closes the connection.
func (d *DirectWriter) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		return nil
	}
	err := d.conn.Close(context.Background())
	d.conn = nil
	return err
}
