package harness

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/recheck"
	"github.com/slotgate/slotgate/report"
)

// crashing is an Emit'ted scenario that records an operation and a fault
// window, then panics before it is judged (TestEmitKeepsCrashedHistory).
var crashing = Scenario{Name: "routing/crashes-mid-run", Row: report.RowRouting, Column: report.ColumnErrors, Spec: "harness self-test",
	Run: func(ctx SpecContext) report.Check {
		rec := Recorder(ctx)
		rec.Op(history.Op{Kind: "set", Outcome: history.OK})
		rec.Fault(history.FaultWindow{Fault: "kill-primary", Target: "p0"})
		var m map[string]int
		m["boom"]++ // a nil-map write: the scenario panics
		return report.Check{}
	}}

// hanging is an Emit'ted scenario that records an operation, then waits for
// its context to end: only its Timeout stops it
// (TestEmitBoundsAHungScenario).
var hanging = Scenario{Name: "routing/hangs-past-its-timeout", Row: report.RowRouting, Column: report.ColumnErrors, Spec: "harness self-test",
	Timeout: 300 * time.Millisecond,
	Run: func(ctx SpecContext) report.Check {
		Recorder(ctx).Op(history.Op{Kind: "set", Outcome: history.OK})
		<-ctx.Done()
		return report.Check{}
	}}

var _ = Describe("harness self-test", func() { Emit(crashing, hanging) })

// failRecorder is a GinkgoTestingT that only notes the failure the
// crashing scenario is expected to cause.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// TestEmitKeepsCrashedHistory runs the Ginkgo tree above (Ginkgo allows one
// RunSpecs a process): the crashed scenario's history is written by Emit's
// cleanup, with what it recorded and how it ended; the hung scenario is
// stopped by its spec timeout, unjudged, its history kept as crashed with
// the timeout named.
func TestEmitKeepsCrashedHistory(t *testing.T) {
	out := t.TempDir()
	t.Setenv(EnvOut, out)
	t.Setenv(EnvSeed, "11")
	ft := &failRecorder{}
	sc, rc := GinkgoConfiguration()
	rc.Succinct, rc.NoColor = true, true
	sc.FocusStrings = []string{"crashes-mid-run", "hangs-past-its-timeout"}
	began := time.Now()
	RunSpecs(ft, "harness", sc, rc) // reports the expected panic and timeout
	if !ft.failed {
		t.Fatal("the crashing and hanging scenarios did not fail their specs")
	}
	if took := time.Since(began); took > time.Minute {
		t.Fatalf("the specs ran %v, past the hung one's 300ms timeout and its grace period", took)
	}
	h, err := history.Read(filepath.Join(out, recheck.HistoriesDir, history.FileName(crashing.Name)))
	if err != nil {
		t.Fatalf("no history for the crashed scenario: %v", err)
	}
	if h.Seed != 11 || len(h.Ops) != 1 || len(h.Faults) != 1 || len(h.Judgements) != 0 ||
		!strings.HasPrefix(h.Crashed, "crashed before it was judged: "+types.SpecStatePanicked.String()) || !strings.Contains(h.Crashed, "assignment to entry in nil map") {
		t.Fatalf("stored history = %+v", h)
	}
	t.Log(h.Crashed)
	h, err = history.Read(filepath.Join(out, recheck.HistoriesDir, history.FileName(hanging.Name)))
	if err != nil {
		t.Fatalf("no history for the hung scenario: %v", err)
	}
	if len(h.Ops) != 1 || len(h.Judgements) != 0 || !strings.Contains(h.Crashed, types.SpecStateTimedout.String()) {
		t.Fatalf("stored history of the hung scenario = %+v", h)
	}
	t.Log(h.Crashed)
}

func TestDefaultTimeoutFollowsProfileAndTiming(t *testing.T) {
	for _, tc := range []struct {
		profile, timing string
		want            time.Duration
	}{
		{"", "", 10 * time.Minute},
		{"smoke", "scaled", 10 * time.Minute},
		{"full", "", 30 * time.Minute},
		{"full", "production", 120 * time.Minute},
	} {
		t.Setenv(EnvProfile, tc.profile)
		t.Setenv(EnvTiming, tc.timing)
		if got := DefaultTimeout(); got != tc.want {
			t.Errorf("profile %q timing %q: DefaultTimeout() = %v, want %v", tc.profile, tc.timing, got, tc.want)
		}
	}
}
