package harness

import (
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Once runs a workload once per key (usually the backend) and lets every
// scenario of a group judge that one run: the errors and the
// silently-wrong columns of a row are two views of one run, and the run
// is what costs (a failover, a drain or an outage takes seconds), so
// running it per column would double the cost and judge two different
// runs (style.md: one workload run, two columns, one primitive).
//
// The run happens inside the first scenario that calls Get, on that
// scenario's spec context: what it records (operations, fault windows,
// spans) lands in that scenario's history and its clock, and its
// DeferCleanups are that scenario's, so R must be data (histories,
// results, windows), never a live resource another scenario still uses.
// The scenario that judges it second takes the run's clock and windows
// from R (UseClock, Evidence.Faults).
//
// Whichever scenario asks first runs it, so selection does not matter: a
// --label-filter that selects only the second column (or a --row run of
// a suite whose first scenario is skipped) still runs the workload, in
// the scenario that is selected. How the first run ends decides the rest:
//
//   - it returns: every later Get returns the same R;
//   - its scenario is skipped (Skip inside the run, e.g. the topology
//     cannot host it): nothing is kept, and the next scenario runs it
//     itself (and is skipped for the same reason, or not);
//   - a fault it injects is not confirmed (MustConfirm): every later Get
//     ends its scenario inconclusive on the same fault, as the first was
//     (never a verdict on the implementation);
//   - it fails, panics or times out: every later Get fails its scenario,
//     naming the scenario the run failed in and how. It is not run again:
//     a second run would be judged apart from the run the first column
//     failed on, and a broken drill would cost its time twice.
//
// Ordered + BeforeAll is the right tool instead when the scenarios share
// a live resource for their whole duration (routing/tls's TLS cluster) or
// are genuine ordered steps on shared state. A BeforeAll runs outside
// every scenario: what it records lands in no scenario's history, and a
// crash in it leaves no crashed history. The Ordered sites whose run
// builds both columns' checks itself (routing/counters, marconi/metrics,
// the marconiaudit rows) keep their evidence in those checks; moving them
// here would change what their histories hold, so they stay as they are.
//
// A Once belongs to one suite process: the CLI runs each suite package in
// one ginkgo process, so its scenarios share the run. Specs of a process
// run one at a time; the lock only guards against a spec that outlived
// its timeout.
type Once[K comparable, R any] struct {
	run  func(ctx SpecContext, k K) R
	mu   sync.Mutex
	runs map[K]*onceRun[R]
}

// onceRun is one key's run and how it ended.
type onceRun[R any] struct {
	result R
	done   bool        // run returned result
	abort  *faultAbort // run ended on an unconfirmed fault
	by     string      // the scenario that ran it
	failed string      // how by ended when run did not return ("" while running)
}

// NewOnce returns a Once that runs run at most once per key.
func NewOnce[K comparable, R any](run func(ctx SpecContext, k K) R) *Once[K, R] {
	return &Once[K, R]{run: run, runs: map[K]*onceRun[R]{}}
}

// Get returns k's run, running it in the calling scenario if no scenario
// has yet; see Once for what a run that did not return leaves behind.
func (o *Once[K, R]) Get(ctx SpecContext, k K) R {
	GinkgoHelper()
	o.mu.Lock()
	r, ok := o.runs[k]
	if !ok {
		r = &onceRun[R]{by: scenarioName(ctx)}
		o.runs[k] = r
	}
	o.mu.Unlock()
	if ok {
		switch {
		case r.done:
			return r.result
		case r.abort != nil:
			panic(*r.abort) // run (Emit) makes it this scenario's inconclusive check too
		case r.failed == "":
			Fail(fmt.Sprintf("the shared run for %v is still running in %s", k, r.by))
		default:
			Fail(fmt.Sprintf("the shared run for %v, which this scenario judges, did not finish: %s", k, r.failed))
		}
	}
	// Registered before the run, so it runs after the run's own cleanups,
	// when the spec's state says how it ended.
	DeferCleanup(func() {
		if r.done || r.abort != nil {
			return
		}
		sr := CurrentSpecReport()
		if sr.State == types.SpecStateSkipped {
			o.mu.Lock()
			delete(o.runs, k)
			o.mu.Unlock()
			return
		}
		r.failed = fmt.Sprintf("%s %s", r.by, sr.State)
		if m := sr.Failure.Message; m != "" {
			r.failed += ": " + m
		}
		if p := sr.Failure.ForwardedPanic; p != "" { // a panic's Message is only "Test Panicked"
			r.failed += " (panic: " + p + ")"
		}
	})
	defer func() {
		if v := recover(); v != nil {
			if a, ok := v.(faultAbort); ok {
				r.abort = &a
			}
			panic(v)
		}
	}()
	r.result = o.run(ctx, k)
	r.done = true
	return r.result
}

// scenarioName is the name of the Emit'ted scenario ctx runs under, else
// the spec's text.
func scenarioName(ctx SpecContext) string {
	if rec := Recorder(ctx); rec != nil {
		if n := rec.Snapshot().Scenario; n != "" {
			return n
		}
	}
	return CurrentSpecReport().LeafNodeText
}
