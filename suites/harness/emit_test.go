package harness

import (
	"path/filepath"
	"strings"
	"testing"

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

var _ = Describe("harness self-test", func() { Emit(crashing) })

// failRecorder is a GinkgoTestingT that only notes the failure the
// crashing scenario is expected to cause.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// TestEmitKeepsCrashedHistory runs the Ginkgo tree above: the crashed
// scenario's history is written by Emit's cleanup, with what it recorded
// and how it ended.
func TestEmitKeepsCrashedHistory(t *testing.T) {
	out := t.TempDir()
	t.Setenv(EnvOut, out)
	t.Setenv(EnvSeed, "11")
	ft := &failRecorder{}
	sc, rc := GinkgoConfiguration()
	rc.Succinct, rc.NoColor = true, true
	sc.FocusStrings = []string{"crashes-mid-run"}
	RunSpecs(ft, "harness", sc, rc) // reports the expected panic
	if !ft.failed {
		t.Fatal("the crashing scenario did not fail its spec")
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
}
