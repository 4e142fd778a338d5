package harness

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/report"
)

// Unsupported reports whether err says the topology cannot host a scenario
// at all — its provider has no such control (errors.ErrUnsupported: a
// local process cannot be cut off the cluster bus) or slotgate does not
// control the target (fixtures.ErrUncontrollable) — as opposed to a
// precondition that broke.
func Unsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fixtures.ErrUncontrollable)
}

// Requires guards a Scenario's Run with what the scenario needs of the
// topology: available is asked when the spec runs. When the topology cannot
// host the scenario (Unsupported), the spec is skipped with that reason and
// records no check: Ginkgo reports it skipped, and report.FromGinkgo
// scores nothing from a skipped spec, so a skipped scenario never counts as
// a pass — its cell passes only on checks that ran, and a cell no check ran
// in is not-run, which fails the gate. Any other error is a broken
// precondition and fails the spec: a skip must not hide it.
func Requires(available func() error, run func(ctx SpecContext) report.Check) func(ctx SpecContext) report.Check {
	return func(ctx SpecContext) report.Check {
		GinkgoHelper()
		if err := available(); err != nil {
			if Unsupported(err) {
				Skip("not run on this topology: " + err.Error())
			}
			Expect(err).NotTo(HaveOccurred(), "the scenario's precondition")
		}
		return run(ctx)
	}
}
