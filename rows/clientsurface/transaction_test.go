package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("client-surface: transaction", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "client-surface/transaction/all-or-nothing/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "MULTI/EXEC over a hash-tagged pair in a migrating slot is never half applied and every acknowledged EXEC is reflected (000 §Conformance, Routing: MOVED/ASK/TRYAGAIN; Locality contract)",
				Run:  func(ctx SpecContext) report.Check { return txAllOrNothing(ctx, b) },
			},
			harness.Scenario{
				Name: "client-surface/transaction/completed/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "MULTI/EXEC in one slot succeeds, re-sent through MOVED/ASK/TRYAGAIN and a failover, within a bound; a failed EXEC is an error, never an empty success (000 §Conformance, Routing)",
				Run:  func(ctx SpecContext) report.Check { return txCompleted(ctx, b) },
			},
		)
	}
})

// Transaction paths: impl's seam, the library's own transaction, and a
// connection pinned to the slot's first owner read two ways.
const (
	// pathPinned: MULTI/EXEC on one connection to the slot's owner held
	// across calls (go-redis ClusterClient.MasterForKey's node client,
	// valkey-go Client.Dedicate), every failure reported.
	pathPinned = "pinned-connection"
	// pathAbortAsSuccess: the same pinned transaction, by a caller that
	// fails only on a transport error and takes an aborted EXEC
	// (EXECABORT, a redirect) for a success without replies.
	pathAbortAsSuccess = "exec-abort-as-success"
)

// txPair is one hash-tagged pair: INCR {tag}a; INCR {tag}b in one
// transaction keeps a == b.
type txPair struct {
	name string
	slot int
	a, b string
}

// txSend runs one transaction and reports what its caller was told.
type txSend func(ctx context.Context, p txPair) judge.TxOp

type txWorker struct {
	pathWorker
	pairs []txPair
	send  txSend
	txs   []judge.TxOp // under mu
}

// run sends one transaction per tick until stop, the pairs in turn.
func (w *txWorker) run(ctx context.Context, stop <-chan struct{}) {
	w.every(ctx, stop, txPace, func(i int) {
		p := w.pairs[i%len(w.pairs)]
		call := w.clock.Now()
		op := w.send(ctx, p)
		op.Pair, op.Slot, op.Call, op.Return = p.name, p.slot, call, w.clock.Now()
		w.mu.Lock()
		w.txs = append(w.txs, op)
		w.hist = append(w.hist, history.Op{Start: op.Call, End: op.Return, Client: "transaction " + w.path, Slot: p.slot, Kind: "multi-exec",
			Outcome: opOutcome(op.ErrKind), ErrKind: op.ErrKind, Err: op.Err})
		w.mu.Unlock()
	})
}

func (w *txWorker) result(ctx context.Context, fresh client.Pool, spans []judge.FaultSpan, minTx int) judge.TxRun {
	GinkgoHelper()
	w.mu.Lock()
	r := judge.TxRun{Path: w.path, Ops: append([]judge.TxOp(nil), w.txs...), Faults: spans, MinTx: minTx, Bound: txBound}
	w.mu.Unlock()
	for _, p := range w.pairs {
		f := judge.TxFinal{Pair: p.name, Read: true}
		for _, k := range []struct {
			key string
			out *string
		}{{p.a, &f.A}, {p.b, &f.B}} {
			v, err := fresh.Do(ctx, client.NewCmd("GET", []string{k.key}))
			if err == nil && v != nil {
				*k.out, err = client.AsString(v)
			}
			if err != nil {
				f.Read, f.Err = false, err.Error()
			}
		}
		r.Finals = append(r.Finals, f)
	}
	return r
}

// failedTx is a transaction its caller was told failed with err.
func failedTx(err error) judge.TxOp {
	return judge.TxOp{ErrKind: traffic.ErrKind(err), Err: err.Error()}
}

// newTxWorkers gives every transaction path Pairs pairs in the moving
// slot; the pinned paths open their connection now, to the slot's owner
// before the move.
func newTxWorkers(ctx context.Context, b client.Backend, pool client.Pool, raw rawClients, moving int, tag string, s surfaceScale) []*txWorker {
	GinkgoHelper()
	paths := []string{pathImpl, pathRaw, pathPinned, pathAbortAsSuccess}
	clock := traffic.ClockOf(ctx)
	var out []*txWorker
	for _, path := range paths {
		w := &txWorker{pathWorker: pathWorker{path: path, clock: clock}}
		for i := range s.Pairs {
			t := tagIn(fmt.Sprintf("cs-tx-%s-%s-%d", tag, path, i), moving)
			w.pairs = append(w.pairs, txPair{name: "{" + t + "}", slot: moving, a: "cs:tx:{" + t + "}:a", b: "cs:tx:{" + t + "}:b"})
		}
		switch path {
		case pathImpl:
			w.send = implTx(pool)
		case pathRaw:
			w.send = rawTx(b, raw)
		default:
			w.send = pinnedTx(ctx, b, raw, w.pairs[0].a, path == pathAbortAsSuccess)
		}
		out = append(out, w)
	}
	return out
}

func implTx(pool client.Pool) txSend {
	return func(ctx context.Context, p txPair) judge.TxOp {
		res, err := pool.Exec(ctx, []client.Cmd{client.NewCmd("INCR", []string{p.a}), client.NewCmd("INCR", []string{p.b})})
		if err != nil {
			return failedTx(err)
		}
		return txReplies(res[0].Reply, res[0].Err, res[1].Reply, res[1].Err)
	}
}

// txReplies reads EXEC's two INCR replies.
func txReplies(a any, errA error, b any, errB error) judge.TxOp {
	if err := errors.Join(errA, errB); err != nil {
		return failedTx(err)
	}
	var op judge.TxOp
	var err error
	if op.A, err = client.AsInt64(a); err == nil {
		op.B, err = client.AsInt64(b)
	}
	if err != nil {
		return failedTx(err)
	}
	return op
}

// rawTx runs the library's own transaction with its defaults: go-redis
// ClusterClient.TxPipeline, valkey-go Client.Dedicated with DoMulti(MULTI,
// INCR, INCR, EXEC) (valkey-go's documented transaction path).
func rawTx(b client.Backend, raw rawClients) txSend {
	if b == client.BackendGoRedis {
		return func(ctx context.Context, p txPair) judge.TxOp {
			return goRedisTx(ctx, raw.goredis.TxPipeline(), p, false)
		}
	}
	return func(ctx context.Context, p txPair) judge.TxOp {
		var op judge.TxOp
		_ = raw.valkey.Dedicated(func(d valkey.DedicatedClient) error {
			op = valkeyTx(ctx, d, p, false)
			return nil
		})
		return op
	}
}

// pinnedTx runs the transaction on one connection to the owner of key's
// slot, taken now and held: go-redis's node client for the key
// (ClusterClient.MasterForKey), a valkey-go DedicatedClient
// (Client.Dedicate). abortAsSuccess reads EXEC as the caller who fails
// only on a transport error does.
func pinnedTx(ctx context.Context, b client.Backend, raw rawClients, key string, abortAsSuccess bool) txSend {
	GinkgoHelper()
	if b == client.BackendGoRedis {
		node, err := raw.goredis.MasterForKey(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		return func(ctx context.Context, p txPair) judge.TxOp {
			return goRedisTx(ctx, node.TxPipeline(), p, abortAsSuccess)
		}
	}
	d, release := raw.valkey.Dedicate()
	DeferCleanup(release)
	var mu sync.Mutex // a DedicatedClient serves one caller at a time
	return func(ctx context.Context, p txPair) judge.TxOp {
		mu.Lock()
		defer mu.Unlock()
		return valkeyTx(ctx, d, p, abortAsSuccess)
	}
}

func goRedisTx(ctx context.Context, pipe redis.Pipeliner, p txPair, abortAsSuccess bool) judge.TxOp {
	a := pipe.Incr(ctx, p.a)
	b := pipe.Incr(ctx, p.b)
	_, err := pipe.Exec(ctx)
	var re redis.Error
	if abortAsSuccess && err != nil && errors.As(err, &re) {
		return judge.TxOp{Empty: true} // a reply came: taken for done
	}
	if err != nil {
		return failedTx(rawErr(err))
	}
	return judge.TxOp{A: a.Val(), B: b.Val()}
}

func valkeyTx(ctx context.Context, d valkey.DedicatedClient, p txPair, abortAsSuccess bool) judge.TxOp {
	res := d.DoMulti(ctx, d.B().Multi().Build(), d.B().Incr().Key(p.a).Build(), d.B().Incr().Key(p.b).Build(), d.B().Exec().Build())
	exec := res[len(res)-1]
	if abortAsSuccess {
		if err := exec.NonValkeyError(); err != nil {
			return failedTx(err)
		}
		if exec.Error() != nil {
			return judge.TxOp{Empty: true} // a reply came: taken for done
		}
	}
	arr, err := exec.ToArray()
	if err != nil {
		// The queued command's error says why EXEC aborted.
		for _, r := range res[1 : len(res)-1] {
			if e := r.Error(); e != nil {
				return failedTx(rawErr(e))
			}
		}
		return failedTx(rawErr(err))
	}
	if len(arr) != 2 {
		return failedTx(fmt.Errorf("EXEC answered %d replies, want 2", len(arr)))
	}
	a, errA := arr[0].AsInt64()
	b, errB := arr[1].AsInt64()
	if err := errors.Join(errA, errB); err != nil {
		return failedTx(rawErr(err))
	}
	return judge.TxOp{A: a, B: b}
}

func txPath(b client.Backend) string {
	if b == client.BackendGoRedis {
		return "go-redis ClusterClient.TxPipeline (Incr, Incr, Exec)"
	}
	return "valkey-go Client.Dedicated + DedicatedClient.DoMulti(MULTI, INCR, INCR, EXEC)"
}

func txMetrics(r surfaceRun) map[string]float64 {
	m := map[string]float64{"moved_slot": float64(r.moved), "failed_over_shard": float64(r.failed)}
	for path, t := range r.txs {
		failed, empty := 0, 0
		for _, o := range t.Ops {
			switch {
			case o.Empty:
				empty++
			case !o.Committed():
				failed++
			}
		}
		m[path+"_transactions"] = float64(len(t.Ops))
		m[path+"_failed"] = float64(failed)
		m[path+"_taken_for_success_without_replies"] = float64(empty)
	}
	return m
}

func emptyOps(t judge.TxRun) int {
	n := 0
	for _, o := range t.Ops {
		if o.Empty {
			n++
		}
	}
	return n
}

func failedOps(t judge.TxRun) int {
	n := 0
	for _, o := range t.Ops {
		if !o.Committed() {
			n++
		}
	}
	return n
}

func txAllOrNothing(ctx SpecContext, b client.Backend) report.Check {
	r := surfaceRuns.Get(ctx, b)
	ev := surfaceEvidence(ctx, r)
	ev.Metrics = txMetrics(r)
	result := judge.TxAllOrNothing.Judge(r.txs[pathImpl])
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s (not scored here): %s", txPath(b), judge.TxAllOrNothing.Judge(r.txs[pathRaw]).Message))
	abort := r.txs[pathAbortAsSuccess]
	ctl := harness.Variant(pathAbortAsSuccess, "a caller on a connection pinned to the slot's first owner that fails only on a transport error: an aborted EXEC (EXECABORT after MOVED/ASK) counted as a committed transaction",
		judge.TxAllOrNothing.Judge(abort))
	ctl = harness.Premise(ctl, emptyOps(abort) > 0, "no EXEC was aborted on the pinned connection")
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, ctl)
}

func txCompleted(ctx SpecContext, b client.Backend) report.Check {
	r := surfaceRuns.Get(ctx, b)
	ev := surfaceEvidence(ctx, r)
	ev.Metrics = txMetrics(r)
	result := judge.TxCompleted.Judge(r.txs[pathImpl])
	rawDone := judge.TxCompleted.Judge(r.txs[pathRaw])
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s (not scored here): %s", txPath(b), rawDone.Message))
	rawAll := check.All("transaction", judge.TxAllOrNothing.Judge(r.txs[pathRaw]), rawDone)
	implAll := check.All("transaction", judge.TxAllOrNothing.Judge(r.txs[pathImpl]), result)
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementTransaction, Client: r.version, Path: txPath(b),
		Raw: rawAll, Wrapped: implAll, Wrapper: "impl/client Pool.Exec (MULTI/EXEC in one slot, re-sent whole while the server proves it did not run)",
		Evidence: fmt.Sprintf("%d hash-tagged pairs per path in slot %d, INCR a; INCR b per transaction, through the slot's move and a graceful failover of its new owner (shard %d).",
			len(r.txs[pathRaw].Finals), r.moved, r.failed)})
	pinned := r.txs[pathPinned]
	loud := harness.Variant(pathPinned, "MULTI/EXEC on a connection pinned to the slot's first owner: after the move every EXEC aborts (loudly) and none completes",
		judge.TxCompleted.Judge(pinned))
	loud = harness.Premise(loud, failedOps(pinned) > 0, "no EXEC failed on the pinned connection")
	abort := r.txs[pathAbortAsSuccess]
	silent := harness.Variant(pathAbortAsSuccess, "the pinned transaction read by a caller that takes an aborted EXEC for a success without replies",
		judge.TxCompleted.Judge(abort))
	silent = harness.Premise(silent, emptyOps(abort) > 0, "no EXEC was aborted on the pinned connection")
	return harness.Check(row, report.ColumnErrors, "", result, ev, loud, silent)
}
