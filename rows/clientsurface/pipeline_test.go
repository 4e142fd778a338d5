package clientsurface_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/clientsurface/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowClientSurface

var _ = Describe("client-surface: pipeline", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "client-surface/pipeline/attributed/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "a pipeline across slots, through a slot move and a failover, attributes every reply to its own key, keeps every acknowledged write and applies no write it reported failed (000 §Conformance, Locality contract: explicit per-key pipelines)",
				Run:  func(ctx SpecContext) report.Check { return pipelineAttributed(ctx, b) },
			},
			harness.Scenario{
				Name: "client-surface/pipeline/complete/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "a pipeline across slots completes its keys under MOVED/ASK and a failover, and every per-key failure is surfaced on its own key (000 §Conformance, Locality contract: partial-failure handling at the call site; Routing)",
				Run:  func(ctx SpecContext) report.Check { return pipelineComplete(ctx, b) },
			},
		)
	}
})

// Pipeline paths: impl's seam, the library's own pipeline read per
// command, and two callers of the library's pipeline that mishandle its
// per-command results.
const (
	pathImpl = "impl"
	pathRaw  = "raw"
	// pathFirstError: the caller takes the pipeline's first error as the
	// whole batch's outcome — go-redis's `if _, err := pipe.Exec(ctx); err
	// != nil { return err }`, valkey-go's return at the first failed
	// result of DoMulti — and tells every key it failed.
	pathFirstError = "first-error-batch"
	// pathSkipZip: the caller keeps the replies that succeeded, in order,
	// and zips them to its keys by index; the keys left over get nothing.
	pathSkipZip = "skip-errors-zip"
)

// poison is what a poisoned key holds: INCRBY on it fails, on that key.
const poison = "not-a-counter"

// pipeKey is one key of a pipeline path.
type pipeKey struct {
	name     string
	slot     int
	delta    int64
	poisoned bool
}

// pipeCmd is one command of a batch.
type pipeCmd struct {
	key  pipeKey
	kind judge.PipeKind
}

// pipeOutcome is one command's outcome from the library or impl.
type pipeOutcome struct {
	value   string
	isNil   bool
	err     error
	missing bool
}

// pipeSend sends one batch and returns each command's outcome, and the
// error the library reports for the batch as a whole (go-redis Exec's; for
// valkey-go, which has none, the first failed result's).
type pipeSend func(ctx context.Context, cmds []pipeCmd) ([]pipeOutcome, error)

// pipeView is how a caller reads a batch's outcomes.
type pipeView func(outs []pipeOutcome, batchErr error) []pipeOutcome

type pipeWorker struct {
	pathWorker
	keys []pipeKey
	send pipeSend
	view pipeView
	cmds []judge.PipeCmd // under mu
}

// run sends a batch per tick until stop: an INCRBY of every key, or a GET
// of a healthy key every fourth batch.
func (w *pipeWorker) run(ctx context.Context, stop <-chan struct{}) {
	w.every(ctx, stop, pipePace, func(batch int) {
		cmds := make([]pipeCmd, len(w.keys))
		for i, k := range w.keys {
			cmds[i] = pipeCmd{key: k, kind: judge.PipeIncr}
			if !k.poisoned && (batch+i)%4 == 3 {
				cmds[i].kind = judge.PipeGet
			}
		}
		call := w.clock.Now()
		outs, batchErr := w.send(ctx, cmds)
		ret := w.clock.Now()
		outs = w.view(outs, batchErr)
		worst := ""
		w.mu.Lock()
		for i, c := range cmds {
			o := outs[i]
			rec := judge.PipeCmd{Batch: batch, Key: c.key.name, Slot: c.key.slot, Kind: c.kind, Delta: c.key.delta, Poisoned: c.key.poisoned,
				Missing: o.missing, Call: call, Return: ret}
			switch {
			case o.missing:
			case o.err != nil:
				rec.ErrKind, rec.Err = traffic.ErrKind(o.err), o.err.Error()
				if !c.key.poisoned && worst == "" {
					worst = rec.ErrKind
				}
			case o.isNil:
			default:
				v, err := strconv.ParseInt(o.value, 10, 64)
				if err != nil {
					v = -1 // not a counter: never a multiple of a delta
				}
				rec.Int = v
			}
			w.cmds = append(w.cmds, rec)
		}
		w.hist = append(w.hist, history.Op{Start: call, End: ret, Client: "pipeline " + w.path, Kind: "pipeline", Outcome: opOutcome(worst), ErrKind: worst})
		w.mu.Unlock()
	})
}

// result reads every key back through fresh and returns the path's run.
func (w *pipeWorker) result(ctx context.Context, fresh client.Pool, spans []judge.FaultSpan, minBatches int) judge.PipelineRun {
	GinkgoHelper()
	w.mu.Lock()
	r := judge.PipelineRun{Path: w.path, Cmds: append([]judge.PipeCmd(nil), w.cmds...), Faults: spans, MinBatches: minBatches, Poison: poison}
	w.mu.Unlock()
	for _, k := range w.keys {
		f := judge.PipeFinal{Key: k.name}
		v, err := fresh.Do(ctx, client.NewCmd("GET", []string{k.name}))
		if err == nil {
			f.Read = true
			if v != nil {
				f.Value, err = client.AsString(v)
				f.Read = err == nil
			}
		}
		if err != nil {
			f.Err = err.Error()
		}
		r.Finals = append(r.Finals, f)
	}
	return r
}

// Views of a batch: as returned, the first error for the whole batch, and
// successes zipped to keys by index.
func viewPerCommand(outs []pipeOutcome, _ error) []pipeOutcome { return outs }

func viewFirstError(outs []pipeOutcome, batchErr error) []pipeOutcome {
	if batchErr == nil {
		return outs
	}
	out := make([]pipeOutcome, len(outs))
	for i := range out {
		out[i] = pipeOutcome{err: batchErr}
	}
	return out
}

func viewSkipZip(outs []pipeOutcome, _ error) []pipeOutcome {
	out := make([]pipeOutcome, 0, len(outs))
	for _, o := range outs {
		if o.err == nil {
			out = append(out, o)
		}
	}
	for len(out) < len(outs) {
		out = append(out, pipeOutcome{missing: true})
	}
	return out
}

// newPipeWorkers lays out every pipeline path's keys (Pinned in the moving
// slot, the rest wherever their names hash; every eighth poisoned) and
// writes the poison.
func newPipeWorkers(ctx context.Context, b client.Backend, pool client.Pool, raw rawClients, rng *rand.Rand, moving int, tag string, s surfaceScale) []*pipeWorker {
	GinkgoHelper()
	paths := []struct {
		name string
		send pipeSend
		view pipeView
	}{
		{pathImpl, implPipeline(pool), viewPerCommand},
		{pathRaw, rawPipeline(b, raw), viewPerCommand},
		{pathFirstError, rawPipeline(b, raw), viewFirstError},
		{pathSkipZip, rawPipeline(b, raw), viewSkipZip},
	}
	deltas := seededDeltas(rng, len(paths)*s.Keys)
	clock := traffic.ClockOf(ctx)
	var out []*pipeWorker
	for p, path := range paths {
		w := &pipeWorker{pathWorker: pathWorker{path: path.name, clock: clock}, send: path.send, view: path.view}
		pinned := tagIn(fmt.Sprintf("cs-pipe-%s-%s", tag, path.name), moving)
		for i := range s.Keys {
			name := fmt.Sprintf("cs:pipe:%s:%s:%d", tag, path.name, i)
			if i < s.Pinned {
				name = fmt.Sprintf("cs:pipe:{%s}:%d", pinned, i)
			}
			k := pipeKey{name: name, slot: slot.Of(name), delta: deltas[p*s.Keys+i], poisoned: i%8 == 2}
			if k.poisoned {
				_, err := pool.Do(ctx, client.NewCmd("SET", []string{name}, poison))
				Expect(err).NotTo(HaveOccurred())
			}
			w.keys = append(w.keys, k)
		}
		out = append(out, w)
	}
	return out
}

// clientCmds is a batch in impl's form.
func clientCmds(cmds []pipeCmd) []client.Cmd {
	out := make([]client.Cmd, len(cmds))
	for i, c := range cmds {
		if c.kind == judge.PipeIncr {
			out[i] = client.NewCmd("INCRBY", []string{c.key.name}, strconv.FormatInt(c.key.delta, 10))
		} else {
			out[i] = client.NewCmd("GET", []string{c.key.name})
		}
	}
	return out
}

// implPipeline sends a batch through impl's Pool.DoMulti.
func implPipeline(pool client.Pool) pipeSend {
	return func(ctx context.Context, cmds []pipeCmd) ([]pipeOutcome, error) {
		res := pool.DoMulti(ctx, clientCmds(cmds))
		out := make([]pipeOutcome, len(res))
		var first error
		for i, r := range res {
			switch {
			case r.Err != nil:
				out[i].err = r.Err
				first = cmp(first, r.Err)
			case r.Reply == nil:
				out[i].isNil = true
			default:
				v, err := client.AsString(r.Reply)
				out[i] = pipeOutcome{value: v, err: err}
			}
		}
		return out, first
	}
}

func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// rawPipeline sends a batch through the library's own pipeline, with its
// defaults: go-redis ClusterClient.Pipeline (IncrBy/Get, Exec), valkey-go
// Client.DoMulti (Incrby/Get builders).
func rawPipeline(b client.Backend, raw rawClients) pipeSend {
	if b == client.BackendGoRedis {
		return func(ctx context.Context, cmds []pipeCmd) ([]pipeOutcome, error) {
			pipe := raw.goredis.Pipeline()
			sent := make([]redis.Cmder, len(cmds))
			for i, c := range cmds {
				if c.kind == judge.PipeIncr {
					sent[i] = pipe.IncrBy(ctx, c.key.name, c.key.delta)
				} else {
					sent[i] = pipe.Get(ctx, c.key.name)
				}
			}
			_, batchErr := pipe.Exec(ctx)
			out := make([]pipeOutcome, len(sent))
			for i, c := range sent {
				var v string
				var err error
				switch t := c.(type) {
				case *redis.IntCmd:
					var n int64
					n, err = t.Result()
					v = strconv.FormatInt(n, 10)
				case *redis.StringCmd:
					v, err = t.Result()
				}
				switch {
				case errors.Is(err, redis.Nil):
					out[i].isNil = true
				case err != nil:
					out[i].err = rawErr(err)
				default:
					out[i].value = v
				}
			}
			if batchErr != nil {
				batchErr = rawErr(batchErr)
			}
			return out, batchErr
		}
	}
	return func(ctx context.Context, cmds []pipeCmd) ([]pipeOutcome, error) {
		c := raw.valkey
		built := make(valkey.Commands, len(cmds))
		for i, pc := range cmds {
			if pc.kind == judge.PipeIncr {
				built[i] = c.B().Incrby().Key(pc.key.name).Increment(pc.key.delta).Build()
			} else {
				built[i] = c.B().Get().Key(pc.key.name).Build()
			}
		}
		res := c.DoMulti(ctx, built...)
		out := make([]pipeOutcome, len(res))
		var first error
		for i, r := range res {
			var v string
			var err error
			if cmds[i].kind == judge.PipeIncr {
				var n int64
				n, err = r.AsInt64()
				v = strconv.FormatInt(n, 10)
			} else {
				v, err = r.ToString()
			}
			switch {
			case valkey.IsValkeyNil(err):
				out[i].isNil = true
			case err != nil:
				out[i].err = rawErr(err)
				first = cmp(first, out[i].err)
			default:
				out[i].value = v
			}
		}
		return out, first
	}
}

// pipelinePath names the raw path per backend.
func pipelinePath(b client.Backend) string {
	if b == client.BackendGoRedis {
		return "go-redis ClusterClient.Pipeline (IncrBy, Get, Exec; results read per command)"
	}
	return "valkey-go Client.DoMulti (Incrby, Get; results read per command)"
}

func pipelineMetrics(r surfaceRun) map[string]float64 {
	m := map[string]float64{"moved_slot": float64(r.moved), "failed_over_shard": float64(r.failed)}
	for path, p := range r.pipes {
		failed := 0
		for _, c := range p.Cmds {
			if c.ErrKind != "" && !c.Poisoned {
				failed++
			}
		}
		m[path+"_commands"] = float64(len(p.Cmds))
		m[path+"_failed_healthy_commands"] = float64(failed)
	}
	return m
}

func pipelineAttributed(ctx SpecContext, b client.Backend) report.Check {
	r := surfaceRuns.Get(ctx, b)
	ev := surfaceEvidence(ctx, r)
	ev.Metrics = pipelineMetrics(r)
	result := judge.PipelineAttributed.Judge(r.pipes[pathImpl])
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s (not scored here): %s", pipelinePath(b), judge.PipelineAttributed.Judge(r.pipes[pathRaw]).Message))
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(pathFirstError, "a caller that takes the library pipeline's first error (a poisoned key's) as the whole batch's outcome and tells every key it failed: writes that ran are reported failed",
			judge.PipelineAttributed.Judge(r.pipes[pathFirstError])),
		harness.Variant(pathSkipZip, "a caller that keeps the replies that succeeded and zips them to its keys by index: after a failed key every reply lands on the wrong key",
			judge.PipelineAttributed.Judge(r.pipes[pathSkipZip])),
	)
}

func pipelineComplete(ctx SpecContext, b client.Backend) report.Check {
	r := surfaceRuns.Get(ctx, b)
	ev := surfaceEvidence(ctx, r)
	ev.Metrics = pipelineMetrics(r)
	result := judge.PipelineComplete.Judge(r.pipes[pathImpl])
	rawComplete := judge.PipelineComplete.Judge(r.pipes[pathRaw])
	ev.Observed = append(ev.Observed, fmt.Sprintf("raw %s (not scored here): %s", pipelinePath(b), rawComplete.Message))
	// The admission judges the library's own pipeline on both columns'
	// checkers; impl's Pool.DoMulti is the wrapper.
	rawAll := check.All("pipeline", judge.PipelineAttributed.Judge(r.pipes[pathRaw]), rawComplete)
	implAll := check.All("pipeline", judge.PipelineAttributed.Judge(r.pipes[pathImpl]), result)
	harness.Admit(harness.Admission{Backend: b, Requirement: report.RequirementPipeline, Client: r.version, Path: pipelinePath(b),
		Raw: rawAll, Wrapped: implAll, Wrapper: "impl/client Pool.DoMulti (per-command results; re-sends only what the server refused unrun)",
		Evidence: fmt.Sprintf("%d keys per path (%d in slot %d, every eighth poisoned) in pipelines of INCRBY/GET through a move of slot %d and a graceful failover of shard %d.",
			len(r.pipes[pathRaw].Finals), surfaceScaleOf().Pinned, r.moved, r.moved, r.failed)})
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant(pathFirstError, "a caller that takes the pipeline's first error as the whole batch's outcome: every healthy key carries a poisoned key's failure",
			judge.PipelineComplete.Judge(r.pipes[pathFirstError])),
		harness.Variant(pathSkipZip, "a caller that zips the successful replies to keys by index: the keys left over get no outcome at all",
			judge.PipelineComplete.Judge(r.pipes[pathSkipZip])),
	)
}
