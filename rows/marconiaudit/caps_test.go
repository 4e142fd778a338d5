package marconiaudit_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/rows/marconiaudit/workload"
	"github.com/slotgate/slotgate/suites/harness"
)

// capProbes meet each cap exactly: max_bytes binding under reject_new and
// under oldest, max_entries binding under oldest. 60 offers against caps
// of 40 — microseconds, no server: the queue is in memory (§3.6).
//
// NOTE: added for a survivor of slotgate mutate (gomut's
// tenantQueue.fitsLocked:swap-cmp#2, bytes+size <= max_bytes → <): the
// ledger row balances for a cap off by one, because every loss is still
// counted; only a cap met to the byte shows it.
func capProbes(m audit.Mutant) []workload.AuditCapProbe {
	return []workload.AuditCapProbe{
		{Name: "bytes-reject-new", Policy: audit.PolicyRejectNew, MaxEntries: 1000, BytesCap: 40, Offers: 60, Mutant: m},
		{Name: "bytes-oldest", Policy: audit.PolicyOldest, MaxEntries: 1000, BytesCap: 40, Offers: 60, Mutant: m},
		{Name: "entries-oldest", Policy: audit.PolicyOldest, MaxEntries: 40, BytesCap: 1000, Offers: 60, Mutant: m},
	}
}

func runCapProbes(m audit.Mutant) []judge.AuditCapHistory {
	GinkgoHelper()
	var hs []judge.AuditCapHistory
	for _, p := range capProbes(m) {
		h, err := p.Run()
		Expect(err).NotTo(HaveOccurred())
		hs = append(hs, h)
	}
	return hs
}

var _ = Describe("marconi-loss-budget caps", func() {
	harness.Emit(harness.Scenario{
		Name: "marconi-loss-budget/caps-exact", Row: report.RowMarconiLossBudget, Column: report.ColumnSilentlyWrong,
		Spec: "max_entries and max_bytes are inclusive caps met exactly: n fixed-size offers with no writer leave exactly min(n, max_entries, max_bytes/size) entries, the rest counted as lost, reject_new keeping the first ones (002 §3.6)",
		Run: func(SpecContext) report.Check {
			ev := harness.Evidence(cfg, nil, nil)
			return harness.Check(report.RowMarconiLossBudget, report.ColumnSilentlyWrong, "", judge.CapsExact.Judge(runCapProbes(audit.MutantNone)), ev,
				harness.Variant(string(audit.MutantBytesCapExclusive),
					"max_bytes read as exclusive: an entry that fills the queue to exactly max_bytes does not fit — one entry fewer kept, one more lost, every loss counted",
					judge.CapsExact.Judge(runCapProbes(audit.MutantBytesCapExclusive))))
		},
	})
})
