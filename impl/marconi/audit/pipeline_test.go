package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/internal/wait"
)

// servers is a 3-primary cluster (the keys must co-locate for real) and a
// PostgreSQL server, shared by the pipeline tests of this file.
type servers struct {
	cluster *fixtures.Topology
	pg      *fixtures.Postgres
}

var (
	serversOnce sync.Once
	shared      servers
	sharedErr   error
)

func startServers(t *testing.T) servers {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real servers")
	}
	serversOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var errC, errP error
		wg.Go(func() { shared.cluster, errC = fixtures.Run(ctx, fixtures.ClusterSpec(3, 0)) })
		wg.Go(func() { shared.pg, errP = fixtures.RunPostgres(ctx) })
		wg.Wait()
		sharedErr = errors.Join(errC, errP)
	})
	if errors.Is(sharedErr, fixtures.ErrMissingBinary) {
		t.Skipf("servers not installed: %v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		_ = shared.cluster.Close()
	}
	_ = shared.pg.Close()
	os.Exit(code)
}

func pool(t *testing.T, s servers, b client.Backend, p client.Protocol) client.Pool {
	t.Helper()
	pl, err := client.NewPool(t.Context(), client.Options{Backend: b, Mode: client.ModeCluster, Protocol: p, Addrs: s.cluster.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.Close() })
	return pl
}

// runWriter runs a writer of q on p until the test ends.
func runWriter(t *testing.T, ctx context.Context, p client.Pool, q *Queue) {
	t.Helper()
	w, err := NewWriter(WriterOptions{Pool: p, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(wctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
}

func countRows(t *testing.T, dsn, schema, table string) (rows, distinct int) {
	t.Helper()
	conn, err := connectPG(t.Context(), dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	q := fmt.Sprintf("SELECT count(*), count(DISTINCT signal_id) FROM %s", pgx.Identifier{table}.Sanitize())
	if err := conn.QueryRow(t.Context(), q).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	return rows, distinct
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.Within(t.Context(), timeout, 10*time.Millisecond, func(context.Context) error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s: %v", timeout, what, err)
	}
}

func counterValue(t *testing.T, m *Metrics, name, tenant string) float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mm := range f.GetMetric() {
			for _, l := range mm.GetLabel() {
				if l.GetName() == "tenant" && l.GetValue() == tenant {
					sum += mm.GetCounter().GetValue() + mm.GetGauge().GetValue()
				}
			}
		}
	}
	return sum
}

// The whole fan-out on a cluster, per backend and protocol: the writer's
// two keys run in one script, the archiver reads RESP2 and RESP3 replies,
// crashes before the ack and is recovered by a successor without a
// duplicate row.
func TestPipelineEndToEnd(t *testing.T) {
	s := startServers(t)
	for _, c := range []struct {
		b client.Backend
		p client.Protocol
	}{{client.BackendGoRedis, client.RESP3}, {client.BackendGoRedis, client.RESP2}, {client.BackendValkeyGo, client.RESP3}} {
		t.Run(fmt.Sprintf("%s-resp%d", c.b, c.p), func(t *testing.T) {
			ctx := t.Context()
			schema := fmt.Sprintf("e2e_%s_%d_%d", map[client.Backend]string{client.BackendGoRedis: "gr", client.BackendValkeyGo: "vg"}[c.b], c.p, time.Now().UnixNano())
			if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema}); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema}); err != nil {
				t.Fatalf("second migration: %v", err)
			}
			tenants := []string{schema + "-a", schema + "-b"}
			metrics := NewMetrics(nil)
			q, err := NewQueue(QueueOptions{Metrics: metrics})
			if err != nil {
				t.Fatal(err)
			}
			runWriter(t, ctx, pool(t, s, c.b, c.p), q)

			const n = 60
			for i := range n {
				e := entry(tenants[i%2], i)
				e.Trace = []TraceEvent{{SignalID: e.Envelope.SignalID, Event: "accepted", At: time.Now()}}
				if i%3 == 0 {
					e.Envelope.Obligation = &Obligation{Kind: "ack", AckSLASeconds: 5, CreatedAt: time.Now(), DurabilityStatus: "pending"}
				}
				q.Offer(e)
			}
			dial := func(ctx context.Context) (client.Pool, error) {
				return client.NewPool(ctx, client.Options{Backend: c.b, Mode: client.ModeCluster, Protocol: c.p, Addrs: s.cluster.Addrs()})
			}
			crashAt := 7
			seen := 0
			var mu sync.Mutex
			newArchiver := func(consumer string, crash bool) *Archiver {
				a, err := NewArchiver(ArchiverOptions{
					Dial: dial, PostgresDSN: s.pg.DSN(), Schema: schema, Tenants: tenants, Consumer: consumer,
					Targets: Targets{Shadow: true, Primary: true}, Block: 100 * time.Millisecond,
					ClaimMinIdle: 50 * time.Millisecond, ClaimEvery: 50 * time.Millisecond, Metrics: metrics,
					Crash: func(p CrashPoint, _, _ string) bool {
						if !crash || p != CrashBeforeAck {
							return false
						}
						mu.Lock()
						defer mu.Unlock()
						seen++
						return seen == crashAt
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			if err := newArchiver("a1", true).Run(ctx); !errors.Is(err, ErrCrashed) {
				t.Fatalf("first archiver: %v, want ErrCrashed", err)
			}
			actx, stopArchiver := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- newArchiver("a2", false).Run(actx) }()
			// Done is every row in PG and nothing pending in either group.
			// (Not the archived counter: an ack the crash cut short may have
			// reached the server with its reply lost, so the entry is acked
			// but never counted — valkey-go returns at the cancel at once.)
			checkPool := pool(t, s, c.b, c.p)
			pending := func() int64 {
				var total int64
				for _, tn := range tenants {
					keys, _ := KeysFor(tn)
					v, err := checkPool.Do(ctx, client.Cmd{Prefix: []string{"XPENDING"}, Keys: []string{keys.Stream}, Args: []string{DefaultGroup}})
					if err != nil {
						t.Fatalf("xpending %s: %v", keys.Stream, err)
					}
					arr, _ := v.([]any)
					if len(arr) == 0 {
						t.Fatalf("xpending %s: reply %v", keys.Stream, v)
					}
					n, _ := client.AsInt64(arr[0])
					total += n
				}
				return total
			}
			waitFor(t, "every entry archived and acknowledged", 20*time.Second, func() bool {
				rows, _ := countRows(t, s.pg.DSN(), schema, TableQueueShadow)
				return rows >= n && pending() == 0
			})
			stopArchiver()
			if err := <-done; err != nil {
				t.Fatalf("second archiver: %v", err)
			}
			for _, table := range []string{TableQueue, TableQueueShadow} {
				if rows, distinct := countRows(t, s.pg.DSN(), schema, table); rows != n || distinct != n {
					t.Errorf("%s: %d rows, %d distinct, want %d", table, rows, distinct, n)
				}
			}
			if rows, _ := countRows(t, s.pg.DSN(), schema, TableObligationsShadow); rows != n/3 {
				t.Errorf("obligations: %d rows, want %d", rows, n/3)
			}
			var recovered float64
			for _, tn := range tenants {
				recovered += counterValue(t, metrics, MetricArchiverRecovered, tn)
			}
			if recovered < 1 {
				t.Errorf("the entry the crashed archiver left pending was not recovered (recovered %v)", recovered)
			}
		})
	}
}

// A retried batch is appended once: the offset stored next to the stream
// covers it. A writer of an older generation is refused.
func TestWriterAppendIsIdempotentAndFenced(t *testing.T) {
	s := startServers(t)
	ctx := t.Context()
	p := pool(t, s, client.BackendGoRedis, client.RESP3)
	q, _ := NewQueue(QueueOptions{})
	w, _ := NewWriter(WriterOptions{Pool: p, Queue: q, Retention: time.Millisecond})
	tenant := fmt.Sprintf("idem-%d", time.Now().UnixNano())
	keys, _ := KeysFor(tenant)
	var errs []PipelineError
	tw := &tenantWriter{w: w, tenant: tenant, keys: keys, lag: w.o.Metrics.writerLag.WithLabelValues(tenant),
		errs: w.o.Metrics.writerErrors, appends: w.o.Metrics.writerAppended.WithLabelValues(tenant)}
	w.o.OnError = func(e PipelineError) { errs = append(errs, e) }

	for i := range 5 {
		q.Offer(entry(tenant, i))
	}
	batch := q.Take(tenant, 10)
	for range 2 {
		if err := tw.append(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	xlen := func() int64 {
		v, err := p.Do(ctx, client.NewCmd("XLEN", []string{keys.Stream}))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := client.AsInt64(v)
		return n
	}
	if n := xlen(); n != 5 {
		t.Fatalf("stream holds %d entries after a retried batch of 5", n)
	}

	// Approximate time trim: with a 1 ms window, whole macro nodes (100
	// entries) of old entries go.
	for round := range 3 {
		for i := range 150 {
			q.Offer(entry(tenant, 1000*(round+1)+i))
		}
		time.Sleep(5 * time.Millisecond) // a duration: older than the 1 ms trim window
		if err := tw.append(ctx, q.Take(tenant, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if n := xlen(); n >= 455 {
		t.Errorf("MINID ~ trimmed nothing: %d entries", n)
	}

	// A successor process wrote with a newer generation: this writer is
	// stale and must not append.
	if _, err := p.Do(ctx, client.NewCmd("SET", []string{keys.Offset}, "99999999999999999999:1")); err != nil {
		t.Fatal(err)
	}
	q.Offer(entry(tenant, 9999))
	err := tw.append(ctx, q.Take(tenant, 1))
	if err == nil || errorCode(err) != "STALEGEN" {
		t.Fatalf("stale generation appended: %v", err)
	}
}

func TestMigratePlainInsertMutantDropsUniqueKeys(t *testing.T) {
	s := startServers(t)
	ctx := t.Context()
	schema := fmt.Sprintf("mutant_plain_%d", time.Now().UnixNano())
	if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema, Mutant: MutantPlainInsert}); err != nil {
		t.Fatal(err)
	}
	conn, err := connectPG(ctx, s.pg.DSN(), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	e := entry("t", 1)
	for range 2 {
		if err := commitEntry(ctx, conn, []tableSet{shadowTables}, e, false); err != nil {
			t.Fatal(err)
		}
	}
	if rows, distinct := countRows(t, s.pg.DSN(), schema, TableQueueShadow); rows != 2 || distinct != 1 {
		t.Errorf("plain insert twice: %d rows, %d distinct — the mutant must duplicate silently", rows, distinct)
	}
}

// An entry's rows commit together or not at all: a trace event PostgreSQL
// rejects (a NUL byte in text) leaves no signal_queue row behind, so a
// retried entry never finds half of itself written.
func TestCommitEntryIsAtomic(t *testing.T) {
	s := startServers(t)
	ctx := t.Context()
	schema := fmt.Sprintf("atomic_%d", time.Now().UnixNano())
	if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	conn, err := connectPG(ctx, s.pg.DSN(), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	e := entry("t", 1)
	e.Trace = []TraceEvent{{SignalID: e.Envelope.SignalID, Event: "accepted"}, {SignalID: e.Envelope.SignalID, Event: "bad\x00event"}}
	err = commitEntry(ctx, conn, []tableSet{canonicalTables, shadowTables}, e, true)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("want the server to reject the NUL byte mid-batch, got %v", err)
	}
	for _, table := range []string{TableQueue, TableQueueShadow} {
		if rows, _ := countRows(t, s.pg.DSN(), schema, table); rows != 0 {
			t.Errorf("%s holds %d rows of a failed entry", table, rows)
		}
	}
}

// §4.1 Restart: a writer stopped mid-stream hands back what it held; its
// successor on the same queue resumes from the offset stored next to the
// stream — every entry appended once, none lost.
func TestWriterRestartResumes(t *testing.T) {
	s := startServers(t)
	ctx := t.Context()
	p := pool(t, s, client.BackendValkeyGo, client.RESP3)
	q, _ := NewQueue(QueueOptions{})
	const n = 2000
	tenant := fmt.Sprintf("restart-%d", time.Now().UnixNano())
	for i := range n {
		q.Offer(entry(tenant, i))
	}
	keys, _ := KeysFor(tenant)
	xlen := func() int64 {
		v, err := p.Do(ctx, client.NewCmd("XLEN", []string{keys.Stream}))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := client.AsInt64(v)
		return n
	}
	for round := 0; xlen() < n; round++ {
		if round > 1000 {
			t.Fatalf("stream stuck at %d of %d entries", xlen(), n)
		}
		w, _ := NewWriter(WriterOptions{Pool: p, Queue: q, Batch: 16})
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = w.Run(wctx) }()
		time.Sleep(3 * time.Millisecond) // a duration: how long the writer runs; stopped mid-stream, often mid-append
		stop()
		<-done
	}
	// The last writer may have been stopped after its append landed but
	// before it knew: those entries are back in the queue. A successor
	// resumes past them (or the script skips them) — no duplicate.
	w, _ := NewWriter(WriterOptions{Pool: p, Queue: q, Batch: 16})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()
	waitFor(t, "the queue to empty", 5*time.Second, func() bool { return q.Stats(tenant).Depth == 0 })
	stop()
	<-done
	ids, err := p.Do(ctx, client.NewCmd("XRANGE", []string{keys.Stream}, "-", "+"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, raw := range ids.([]any) {
		fields := raw.([]any)[1].([]any)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "signal_id" {
				seen[fields[i+1].(string)]++
			}
		}
	}
	if len(seen) != n || xlen() != n {
		t.Fatalf("%d distinct signals in %d entries, want %d once each", len(seen), xlen(), n)
	}
	if st := q.Stats(tenant); st.Depth != 0 || len(st.Dropped) != 0 {
		t.Errorf("queue after the restarts: %+v", st)
	}
}

// A stop between an entry's write and its ack (a §8 flip from shadow to
// primary restarts the archiver on the other table set) lets the entry in
// hand finish its ack: the archiver that takes over never writes it into
// the other tables too.
func TestArchiverStopFinishesEntryInHand(t *testing.T) {
	s := startServers(t)
	ctx := t.Context()
	schema := fmt.Sprintf("stop_%d", time.Now().UnixNano())
	if err := Migrate(ctx, s.pg.DSN(), MigrateOptions{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	tenant := schema + "-t"
	q, err := NewQueue(QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runWriter(t, ctx, pool(t, s, client.BackendGoRedis, client.RESP3), q)
	const n = 20
	for i := range n {
		q.Offer(entry(tenant, i))
	}
	dial := func(ctx context.Context) (client.Pool, error) {
		return client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeCluster, Addrs: s.cluster.Addrs()})
	}
	archiver := func(consumer string, targets Targets, crash func(CrashPoint, string, string) bool) *Archiver {
		a, err := NewArchiver(ArchiverOptions{Dial: dial, PostgresDSN: s.pg.DSN(), Schema: schema, Tenants: []string{tenant}, Consumer: consumer,
			Targets: targets, Block: 100 * time.Millisecond, ClaimMinIdle: 50 * time.Millisecond, ClaimEvery: 50 * time.Millisecond, Crash: crash})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// The shadow archiver is stopped right after its 5th write committed.
	sctx, stop := context.WithCancel(ctx)
	written := 0
	shadow := archiver("shadow", Targets{Shadow: true}, func(p CrashPoint, _, _ string) bool {
		if p == CrashBeforeAck {
			if written++; written == 5 {
				stop()
			}
		}
		return false
	})
	if err := shadow.Run(sctx); err != nil {
		t.Fatalf("shadow archiver: %v", err)
	}
	pctx, stopPrimary := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- archiver("primary", Targets{Primary: true}, nil).Run(pctx) }()
	waitFor(t, "every entry archived", 20*time.Second, func() bool {
		a, _ := countRows(t, s.pg.DSN(), schema, TableQueueShadow)
		b, _ := countRows(t, s.pg.DSN(), schema, TableQueue)
		return a+b >= n
	})
	stopPrimary()
	if err := <-done; err != nil {
		t.Fatalf("primary archiver: %v", err)
	}
	shadowRows, _ := countRows(t, s.pg.DSN(), schema, TableQueueShadow)
	primaryRows, _ := countRows(t, s.pg.DSN(), schema, TableQueue)
	if shadowRows != 5 || primaryRows != n-5 {
		t.Errorf("shadow %d rows, primary %d rows; want 5 and %d, each entry archived once (the entry in hand at the stop acknowledged, not claimed again)", shadowRows, primaryRows, n-5)
	}
}
