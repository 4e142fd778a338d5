package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/recheck"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
)

// Scenario is one scored spec, as data (etcd's TestScenario): the row and
// column it scores, the spec section it enforces, and how to run it. Run
// returns the check; the scenario asserts nothing itself.
type Scenario struct {
	// Name is a slash path: <row>/<what>[/<backend>].
	Name   string
	Row    report.RowID
	Column report.Column
	// Spec cites the section the scenario enforces.
	Spec string
	Run  func(ctx SpecContext) report.Check
	// Timeout bounds the spec (Ginkgo's SpecTimeout): when it passes, the
	// scenario's context is cancelled and the spec ends unjudged, its
	// history kept as crashed, while the rest of the suite goes on. Zero
	// takes SpecTimeout(): a hung scenario costs one cell, not the run.
	Timeout time.Duration
}

// DefaultTimeout is a scenario's default bound, by the profile and timing in
// the environment (EnvProfile, EnvTiming): well above the longest spec of
// the profile, which is the first of a family sharing one recorded run
// (harness.Once), so only a hang reaches it.
func DefaultTimeout() time.Duration {
	d := 10 * time.Minute
	if p, err := ParseProfile(os.Getenv(EnvProfile)); err == nil && p == ProfileFull {
		d = 30 * time.Minute
	}
	if t, err := runenv.ParseTiming(os.Getenv(EnvTiming)); err == nil && t == runenv.TimingProduction {
		d *= 4 // failovers of tens of seconds, as the run's own --timeout
	}
	return d
}

// emitted are the scenario names this suite process declared: a history is
// stored under its scenario's name, so two scenarios of one name (two
// columns of one run, say) would overwrite each other's judgement and
// leave one check that `slotgate check --from` cannot replay.
var emitted = map[string]bool{}

// Emit declares one Ginkgo spec per scenario, labelled with its row and
// column, recording and asserting the check it returns. A scenario name
// declared twice stops the suite as it is built.
func Emit(scenarios ...Scenario) {
	for _, s := range scenarios {
		if emitted[s.Name] {
			panic(fmt.Sprintf("harness.Emit: scenario %q declared twice; histories are stored by scenario name, so give each column its own (e.g. %s/%s)", s.Name, s.Name, s.Column))
		}
		emitted[s.Name] = true
		timeout := s.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout()
		}
		It(fmt.Sprintf("%s [%s · %s] — %s", s.Name, s.Row, s.Column, s.Spec), Scores(s.Row, s.Column), SpecTimeout(timeout), func(ctx SpecContext) {
			began := time.Now()
			rec := history.NewRecorder(s.Name, 0, nil)
			judged := false
			// A scenario that crashes (a panic, a failed setup or
			// assertion, a timeout) is never judged; what it recorded is
			// still written, with how it ended, so a reviewer sees the
			// partial evidence. Registered first, it runs after the
			// scenario's own cleanups.
			DeferCleanup(func() {
				if sr := CurrentSpecReport(); !judged && sr.State != types.SpecStateSkipped {
					keepCrashed(rec, crashNote(sr))
				}
			})
			c := run(withRecorder(ctx, rec), s)
			if ctx.Err() != nil {
				// Timed out or interrupted: what it returned judges a cut
				// run, so it is not a verdict; the cleanup keeps the
				// history as crashed, and Ginkgo reports the timeout.
				return
			}
			c.Row, c.Column, c.Scenario = s.Row, s.Column, s.Name
			c.Evidence.Duration = report.Duration(time.Since(began))
			keep(rec, &c)
			judged = true
			Record(c)
		})
	}
}

// keep joins the scenario's history and its check: the fault windows
// fault.Apply recorded become the check's evidence (a suite that reuses a
// run another scenario recorded passes that run's windows, which join this
// history), the judgement behind the check is recorded, and the history is
// written into the run's out directory (EnvOut) for the report and
// `slotgate check --from`.
func keep(rec *history.Recorder, c *report.Check) {
	began := rec.Clock().Began()
	if len(c.Evidence.Faults) == 0 {
		for _, w := range rec.Faults() {
			c.Evidence.Faults = append(c.Evidence.Faults, report.FaultWindowOf(w, began))
		}
	} else if len(rec.Faults()) == 0 {
		for _, w := range c.Evidence.Faults {
			rec.Fault(w.On(began))
		}
	}
	rec.Judgement(recheck.Judgement(*c))
	// A scenario that injected faults and recorded its operations gets
	// its timeline drawn from the history itself, unless the suite drew
	// one: every fault-injecting scenario has a timeline.
	if c.Evidence.Timeline == nil {
		if h := rec.Snapshot(); len(h.Faults) > 0 && len(h.Ops) > 0 {
			c.Evidence.Timeline = Timeline(h)
		}
	}
	dir := os.Getenv(EnvOut)
	if dir == "" {
		return
	}
	h := rec.Snapshot()
	h.Seed = c.Evidence.Seed
	if _, err := history.Write(filepath.Join(dir, recheck.HistoriesDir), h); err != nil {
		// The check stands; a reviewer is told its history is missing
		// (check --from then lists it as not persisted).
		c.Evidence.Observed = append(c.Evidence.Observed, "history not stored: "+err.Error())
	}
}

// keepCrashed writes the history of a scenario that ended before it was
// judged into the run's out directory (EnvOut): its operations, fault
// windows, spans and samples so far, and note (crashNote). Best effort: the
// spec has already failed, and says why.
func keepCrashed(rec *history.Recorder, note string) {
	dir := os.Getenv(EnvOut)
	if dir == "" {
		return
	}
	seed, _ := strconv.ParseInt(os.Getenv(EnvSeed), 10, 64)
	if _, err := writeCrashed(filepath.Join(dir, recheck.HistoriesDir), rec, seed, note); err != nil {
		GinkgoWriter.Printf("history of the crashed scenario not stored: %v\n", err)
	}
}

// writeCrashed writes rec's history so far under dir, marked crashed with
// note, and returns its path.
func writeCrashed(dir string, rec *history.Recorder, seed int64, note string) (string, error) {
	h := rec.Snapshot()
	h.Seed, h.Crashed = seed, note
	return history.Write(dir, h)
}

// crashNote says how a spec that was never judged ended: its state, the
// failure's message, a forwarded panic and where it happened.
func crashNote(sr types.SpecReport) string {
	f := sr.Failure
	note := "crashed before it was judged: " + sr.State.String()
	if f.Message != "" {
		note += ": " + f.Message
	}
	if f.ForwardedPanic != "" {
		note += " (panic: " + f.ForwardedPanic + ")"
	}
	// A panic run re-raises is located at its re-panic, which says nothing.
	if loc := f.Location.FileName; loc != "" && !strings.HasSuffix(loc, filepath.Join("suites", "harness", "scenario.go")) {
		note += fmt.Sprintf(" at %s:%d", filepath.Base(loc), f.Location.LineNumber)
	}
	return note
}

// specContext is the spec's context carrying the scenario's recorder, so
// fault.Apply and traffic record into it (history.From).
type specContext struct {
	SpecContext
	values context.Context // the spec context plus the recorder
}

func (c specContext) Value(key any) any { return c.values.Value(key) }

func withRecorder(ctx SpecContext, rec *history.Recorder) SpecContext {
	return specContext{SpecContext: ctx, values: history.With(ctx, rec)}
}

// Recorder is the scenario's history recorder that ctx carries (nil
// outside an Emit'ted scenario, which records nothing).
func Recorder(ctx context.Context) *history.Recorder { return history.From(ctx) }

// Faults are the fault windows recorded so far in the scenario ctx runs
// under, in wall time: what a suite that shares one run among several
// scenarios keeps for the others.
func Faults(ctx context.Context) []report.FaultWindow {
	rec := history.From(ctx)
	var out []report.FaultWindow
	for _, w := range rec.Faults() {
		out = append(out, report.FaultWindowOf(w, rec.Clock().Began()))
	}
	return out
}

// UseClock puts the scenario's history on a shared run's clock (a run
// memoised under another scenario), so the spans and fault windows it
// records line up with that run's operations.
func UseClock(ctx context.Context, c *history.Clock) { history.From(ctx).UseClock(c) }

// Spans records measured intervals (a dispatch halt, an outage as the
// clients saw it) into the scenario's history, on its clock, for the
// timeline.
func Spans(ctx context.Context, spans ...history.Span) {
	rec := history.From(ctx)
	for _, s := range spans {
		rec.Span(s)
	}
}

// Windows are fault windows (fault.Apply's, fault.Held's) in the report's
// form, for a suite that keeps a shared run's windows beside its own data;
// the conversion is report.FaultWindowOf's, the one place it is written.
func Windows(ws ...fault.Window) []report.FaultWindow {
	var out []report.FaultWindow
	for _, w := range ws {
		c := history.ClockAt(w.Start)
		out = append(out, report.FaultWindowOf(w.On(c), c.Began()))
	}
	return out
}

// run runs the scenario; a fault MustConfirm found unconfirmed ends it
// with an inconclusive check naming the fault (never a verdict on
// the implementation). Every other panic — Ginkgo's own failures — passes.
func run(ctx SpecContext, s Scenario) (c report.Check) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		a, ok := v.(faultAbort)
		if !ok {
			panic(v)
		}
		r := check.FaultNotConfirmed(s.Name, a.err.Fault, a.err.Err)
		c = Check(s.Row, s.Column, s.Name, r, report.Evidence{Seed: a.seed})
	}()
	return s.Run(ctx)
}

// faultAbort carries an unconfirmed fault from MustConfirm to run.
type faultAbort struct {
	err  *fault.NotConfirmedError
	seed int64
}

// MustConfirm is what a suite calls on fault.Apply's error where it would
// have asserted no error: nil passes; a *fault.NotConfirmedError (the
// fault could not be injected or confirmed) ends the scenario with an
// inconclusive check — "fault X not confirmed (reason)", the harness's
// failure, not the implementation's; any other error fails the spec as
// before. Call it only from the spec's own goroutine, after stopping
// what it started (a scenario's deferred cleanups still run). seed is the
// run's seed, for the replay line.
func MustConfirm(err error, seed int64) {
	GinkgoHelper()
	if e, ok := fault.NotConfirmed(err); ok {
		panic(faultAbort{err: e, seed: seed})
	}
	Expect(err).NotTo(HaveOccurred())
}

// FaultResult is the check result for a fault.Apply error: inconclusive
// ("fault X not confirmed (reason)") when the harness could not inject or
// confirm the fault, so the cell names the harness and never the
// implementation; ok is false for an error that is not Apply's.
func FaultResult(checker string, err error) (r check.Result, ok bool) {
	e, ok := fault.NotConfirmed(err)
	if !ok {
		return check.Result{}, false
	}
	return check.FaultNotConfirmed(checker, e.Fault, e.Err), true
}
