package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/traffic"
)

// The one adapter from what the suites record today — each workload's own
// operation type, fault windows in wall time — to history.History, so the
// report can draw every fault-injecting scenario's timeline
// (report.Bucketize, report.RenderSVG). When traffic records into history
// itself and fault.Apply records its windows, the suites hand
// that history to Timeline and the converters below go.

// Timeline reduces h to the report's timeline (100 ms buckets, downsampled
// for a long scenario), for Evidence.Timeline.
func Timeline(h history.History) *report.Timeline {
	t := report.Bucketize(h, report.DefaultBucket)
	return &t
}

// outcome is an operation's outcome from its recorded error kind: "" is
// ok; a call that got no reply ("network") or that the scenario cut short
// (traffic.ErrKindStopped) may have taken effect, so it is unknown; any
// error reply is failed.
func outcome(errKind string) history.Outcome {
	switch errKind {
	case "":
		return history.OK
	case "network", traffic.ErrKindStopped:
		return history.Unknown
	}
	return history.Failed
}

// SubscriptionOps converts a subscription history: publishes as
// operations of series+" publish", and each delivery as an operation of
// series+" delivery" from its publish to its arrival (its latency is the
// delivery latency); the history's fault windows are already on its clock.
func SubscriptionOps(series string, h history.SubscriptionHistory) ([]history.Op, []history.FaultWindow) {
	type msg struct {
		pub int
		seq int64
	}
	sent := make(map[msg]time.Duration, len(h.Publishes))
	ops := make([]history.Op, 0, len(h.Publishes)+len(h.Deliveries))
	for _, p := range h.Publishes {
		sent[msg{p.Publisher, p.Seq}] = p.Sent
		ops = append(ops, history.Op{Start: p.Sent, End: p.Done, Backend: series + " publish", Kind: "publish",
			Outcome: outcome(p.ErrKind), ErrKind: p.ErrKind, Err: p.Err})
	}
	for _, d := range h.Deliveries {
		start, ok := sent[msg{d.Publisher, d.Seq}]
		if !ok {
			start = d.At
		}
		ops = append(ops, history.Op{Start: start, End: d.At, Backend: series + " delivery", Kind: "deliver", Outcome: history.OK})
	}
	faults := make([]history.FaultWindow, 0, len(h.Faults))
	for _, f := range h.Faults {
		faults = append(faults, history.FaultWindow{Fault: f.Name, Target: f.Target, Start: f.Start, End: f.End})
	}
	return ops, faults
}

// Windows puts fault windows recorded in wall time on the clock that began
// at began (traffic.Clock.Began).
func HistoryWindows(began time.Time, ws []report.FaultWindow) []history.FaultWindow {
	out := make([]history.FaultWindow, 0, len(ws))
	for _, w := range ws {
		out = append(out, history.FaultWindow{Fault: w.Fault, Target: w.Target, Start: w.Start.Sub(began), End: w.End.Sub(began)})
	}
	return out
}

// FencingTimeline draws a fencing counterexample (check.FencingCounterexample)
// for one session: each pod's calls as bars labelled with what came back,
// and each pod's lease as the pod believed it held one — from its
// successful acquire to its release, or to the first renew or release the
// directory refused (it learned it had lost it), or to the end — one lane
// per pod (its calls beside it), so two pods' lease bars over the same instant are two
// authorities at once. Times start at the session's first call.
func FencingTimeline(caption string, ops []history.FencingOp) *report.Timeline {
	if len(ops) == 0 {
		return nil
	}
	t0 := ops[0].Call
	for _, o := range ops {
		t0 = min(t0, o.Call)
	}
	var h history.History
	type lease struct {
		gen   int64
		start time.Duration
	}
	held := map[string]lease{}
	closeLease := func(owner string, at time.Duration) {
		if l, ok := held[owner]; ok {
			h.Spans = append(h.Spans, history.Span{Name: owner + " lease", Client: fmt.Sprintf("gen %d", l.gen), Start: l.start, End: at})
			delete(held, owner)
		}
	}
	byReturn := append([]history.FencingOp(nil), ops...)
	slices.SortStableFunc(byReturn, func(a, b history.FencingOp) int { return cmp.Compare(a.Return, b.Return) })
	var end time.Duration
	for _, o := range byReturn {
		at := o.Return - t0
		end = max(end, at)
		h.Spans = append(h.Spans, history.Span{Name: o.Owner + " calls", Client: fencingLabel(o), Start: o.Call - t0, End: at})
		if o.Unknown {
			continue
		}
		l, holds := held[o.Owner]
		switch {
		case o.Kind == history.OpAcquire && o.OK:
			closeLease(o.Owner, at)
			held[o.Owner] = lease{o.Gen, at}
		case (o.Kind == history.OpRelease || o.Kind == history.OpRenew) && holds && l.gen == o.Gen && (o.Kind == history.OpRelease || !o.OK):
			closeLease(o.Owner, at)
		}
	}
	for owner := range held { // still believed held when the history ends
		closeLease(owner, end)
	}
	slices.SortStableFunc(h.Spans, func(a, b history.Span) int { return cmp.Compare(a.Name, b.Name) })
	// No throughput to draw: buckets only set the axis, so fine ones keep
	// a history of a few milliseconds across the whole width.
	t := report.Bucketize(h, max(time.Microsecond*100, end/200))
	t.Caption = caption
	return &t
}

// fencingLabel says in a few characters what a call asked and got back.
func fencingLabel(o history.FencingOp) string {
	switch {
	case o.Unknown:
		return string(o.Kind) + " ?"
	case o.Kind == history.OpAcquire && o.OK:
		return fmt.Sprintf("acquire → g%d", o.Gen)
	case o.Kind == history.OpAcquire:
		return fmt.Sprintf("acquire ✗ (g%d held)", o.HolderGen)
	case o.Kind == history.OpValidate:
		return fmt.Sprintf("validate g%d → %d", o.Gen, o.Verdict)
	case o.OK:
		return fmt.Sprintf("%s g%d ✓", o.Kind, o.Gen)
	}
	return fmt.Sprintf("%s g%d ✗", o.Kind, o.Gen)
}

// Call records one call a suite drove itself (no traffic workload) into
// the history of the scenario ctx runs under, from start (on its clock)
// to now, with err's outcome (traffic.Outcome): the suite's loop gets a
// timeline beside its fault windows.
func Call(ctx context.Context, series, kind string, start time.Duration, err error) {
	rec := history.From(ctx)
	if rec == nil {
		return
	}
	op := history.Op{Start: start, End: rec.Clock().Now(), Backend: series, Kind: kind, Outcome: traffic.Outcome(err)}
	if err != nil {
		op.ErrKind, op.Err = traffic.ErrKind(err), err.Error()
	}
	rec.Op(op)
}

// RecordOps records a run's operations, measured on clock, into the
// history of the scenario ctx runs under, so the scenario's timeline is
// drawn from its history (keep). The scenario that ran the workload
// recorded its fault windows on its own clock, which began before the
// run's: the operations are moved onto it. A scenario that judges a run
// recorded before it began (a BeforeAll's, or a harness.Once run another
// scenario recorded) takes the run's clock instead, so the windows it
// adopts from the evidence (keep) line up; it must not have recorded
// fault windows of its own.
func RecordOps(ctx context.Context, clock *history.Clock, ops []history.Op) {
	rec := history.From(ctx)
	if rec == nil || clock == nil {
		return
	}
	if rec.Clock().Began().After(clock.Began()) {
		rec.UseClock(clock)
	}
	shift := clock.Began().Sub(rec.Clock().Began())
	for _, o := range ops {
		o.Start, o.End = o.Start+shift, o.End+shift
		rec.Op(o)
	}
}

// AuditOps converts an audit load's offers (Offer calls on the audit
// queue): ok when the queue kept the signal; failed when it refused it (a
// counted loss) or when the legacy synchronous PG write beside it failed.
func AuditOps(series string, offers []history.AuditOffer) []history.Op {
	out := make([]history.Op, 0, len(offers))
	for _, o := range offers {
		op := history.Op{Start: o.At, End: o.At + o.Took, Backend: series, Kind: "offer", Outcome: history.OK}
		switch {
		case !o.Kept:
			op.Outcome, op.ErrKind = history.Failed, "refused"
		case o.DirectErr != "":
			op.Outcome, op.ErrKind, op.Err = history.Failed, "direct-write", o.DirectErr
		}
		out = append(out, op)
	}
	return out
}
