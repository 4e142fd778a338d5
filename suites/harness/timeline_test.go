package harness

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/report"
)

// Two pods granted one session at once show as two overlapping lease bars,
// one lane each, on a clock that starts at the session's first call.
func TestFencingTimeline(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ops := []check.FencingOp{
		{Client: 0, Session: "c:s", Kind: check.OpAcquire, Owner: "p0", Gen: 1, OK: true, Call: ms(1000), Return: ms(1002)},
		{Client: 1, Session: "c:s", Kind: check.OpAcquire, Owner: "p1", Gen: 2, OK: true, Call: ms(1001), Return: ms(1003)},
		{Client: 0, Session: "c:s", Kind: check.OpRelease, Owner: "p0", Gen: 1, OK: true, Call: ms(1010), Return: ms(1011)},
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
	var ops []check.FencingOp
	for i, p := range []string{"pod-0", "pod-1", "pod-2"} {
		ops = append(ops,
			check.FencingOp{Client: i, Session: "c:s", Kind: check.OpAcquire, Owner: p, Gen: int64(i + 1), OK: true, Call: ms(100 + 3*i), Return: ms(104 + 3*i)},
			check.FencingOp{Client: i, Session: "c:s", Kind: check.OpRenew, Owner: p, Gen: int64(i + 1), OK: i == 2, Call: ms(120 + 2*i), Return: ms(123 + 2*i)},
		)
	}
	ops = append(ops, check.FencingOp{Client: 2, Session: "c:s", Kind: check.OpRelease, Owner: "pod-2", Gen: 3, OK: true, Call: ms(140), Return: ms(142)})
	if err := os.WriteFile(out, []byte(report.RenderSVG(*FencingTimeline("x", ops))), 0o644); err != nil {
		t.Fatal(err)
	}
}
