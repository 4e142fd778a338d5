package harness

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/report"
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
}

// Emit declares one Ginkgo spec per scenario, labelled with its row and
// column, recording and asserting the check it returns.
func Emit(scenarios ...Scenario) {
	for _, s := range scenarios {
		It(fmt.Sprintf("%s [%s · %s] — %s", s.Name, s.Row, s.Column, s.Spec), Scores(s.Row, s.Column), func(ctx SpecContext) {
			began := time.Now()
			c := s.Run(ctx)
			c.Row, c.Column, c.Scenario = s.Row, s.Column, s.Name
			c.Evidence.Duration = report.Duration(time.Since(began))
			Record(c)
		})
	}
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
