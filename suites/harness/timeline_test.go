package harness

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// Two pods granted one session at once show as two overlapping lease bars,
// one lane each, on a clock that starts at the session's first call.
func TestFencingTimeline(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ops := []history.FencingOp{
		{Client: 0, Session: "c:s", Kind: history.OpAcquire, Owner: "p0", Gen: 1, OK: true, Call: ms(1000), Return: ms(1002)},
		{Client: 1, Session: "c:s", Kind: history.OpAcquire, Owner: "p1", Gen: 2, OK: true, Call: ms(1001), Return: ms(1003)},
		{Client: 0, Session: "c:s", Kind: history.OpRelease, Owner: "p0", Gen: 1, OK: true, Call: ms(1010), Return: ms(1011)},
	}
	tl := FencingTimeline("caught", ops)
	if tl.Caption != "caught" || len(tl.Series) != 0 {
		t.Fatalf("caption %q, %d series", tl.Caption, len(tl.Series))
	}
	leases := map[string]report.TimelineWindow{}
	for _, s := range tl.Spans {
		if strings.HasSuffix(s.Name, " lease") {
			leases[s.Name] = s
		}
		if s.Start < 0 {
			t.Errorf("span %+v before the session's first call", s)
		}
	}
	p0, p1 := leases["p0 lease"], leases["p1 lease"]
	if p0.Target != "gen 1" || p1.Target != "gen 2" || !(p1.Start < p0.End) {
		t.Errorf("leases %+v: want gen 1 and gen 2 overlapping", leases)
	}
	if p0.Start != report.Duration(ms(2)) || p0.End != report.Duration(ms(11)) {
		t.Errorf("p0's lease %v → %v, want 2ms → 11ms", p0.Start, p0.End)
	}
}

func TestOutcome(t *testing.T) {
	for kind, want := range map[string]string{"": "ok", "network": "unknown", "stopped": "unknown", "MOVED": "failed", "CLUSTERDOWN": "failed"} {
		if got := string(outcome(kind)); got != want {
			t.Errorf("outcome(%q) = %s, want %s", kind, got, want)
		}
	}
}

// TestFencingTimelineSVG writes the drawing for a look when asked
// (SLOTGATE_TIMELINE_OUT=x.svg; rsvg-convert -o x.png x.svg).
func TestFencingTimelineSVG(t *testing.T) {
	out := os.Getenv("SLOTGATE_TIMELINE_OUT")
	if out == "" {
		t.Skip("SLOTGATE_TIMELINE_OUT not set")
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var ops []history.FencingOp
	for i, p := range []string{"pod-0", "pod-1", "pod-2"} {
		ops = append(ops,
			history.FencingOp{Client: i, Session: "c:s", Kind: history.OpAcquire, Owner: p, Gen: int64(i + 1), OK: true, Call: ms(100 + 3*i), Return: ms(104 + 3*i)},
			history.FencingOp{Client: i, Session: "c:s", Kind: history.OpRenew, Owner: p, Gen: int64(i + 1), OK: i == 2, Call: ms(120 + 2*i), Return: ms(123 + 2*i)},
		)
	}
	ops = append(ops, history.FencingOp{Client: 2, Session: "c:s", Kind: history.OpRelease, Owner: "pod-2", Gen: 3, OK: true, Call: ms(140), Return: ms(142)})
	if err := os.WriteFile(out, []byte(report.RenderSVG(*FencingTimeline("x", ops))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run's operations land on the clock of the scenario that ran it
// (moved by the gap between the two clocks), and a scenario that began
// after the run takes the run's clock: no operation before zero, either
// way.
func TestRecordOps(t *testing.T) {
	run := history.NewClock()
	ops := []history.Op{{Start: 10 * time.Millisecond, End: 20 * time.Millisecond, Kind: "send", Outcome: history.OK}}

	earlier := history.NewRecorder("ran-it", 0, history.ClockAt(run.Began().Add(-time.Second)))
	RecordOps(history.With(context.Background(), earlier), run, ops)
	if got := earlier.Snapshot().Ops; len(got) != 1 || got[0].Start != time.Second+10*time.Millisecond || got[0].End != time.Second+20*time.Millisecond {
		t.Errorf("on the running scenario's clock: %+v, want 1.01s → 1.02s", got)
	}
	if earlier.Clock().Began() != run.Began().Add(-time.Second) {
		t.Error("the running scenario's clock was replaced: its fault windows would move")
	}

	later := history.NewRecorder("judges-it", 0, history.ClockAt(run.Began().Add(time.Second)))
	RecordOps(history.With(context.Background(), later), run, ops)
	if got := later.Snapshot().Ops; len(got) != 1 || got[0].Start != 10*time.Millisecond || !later.Clock().Began().Equal(run.Began()) {
		t.Errorf("a later scenario: %+v on a clock from %v, want the run's clock and 10ms", got, later.Clock().Began())
	}
	RecordOps(context.Background(), run, ops) // no recorder: records nothing, does not panic
}

// An offer's outcome is what its ledger says: kept ok; refused by the
// queue, or kept with a failed legacy write beside it, failed.
func TestLedgerOutcomes(t *testing.T) {
	audit := AuditOps("main", []history.AuditOffer{{Kept: true, At: time.Second, Took: time.Millisecond}, {Kept: false}, {Kept: true, DirectErr: "pg down"}})
	if audit[0].Outcome != history.OK || audit[0].End != time.Second+time.Millisecond || audit[1].Outcome != history.Failed || audit[2].Outcome != history.Failed {
		t.Errorf("audit ops %+v", audit)
	}
}
