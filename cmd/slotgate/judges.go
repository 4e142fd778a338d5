package main

// The checkers of the rows that live in one folder are defined by their
// rows/<row>/judge packages; linking every one of them lets `slotgate check
// --from` replay those rows' judgements (TestCLILinksEveryRowJudge).
import (
	_ "github.com/slotgate/slotgate/rows/axioms/judge"
	_ "github.com/slotgate/slotgate/rows/clientsurface/judge"
	_ "github.com/slotgate/slotgate/rows/failuredrills/judge"
	_ "github.com/slotgate/slotgate/rows/fencingfailover/judge"
	_ "github.com/slotgate/slotgate/rows/fencingmigration/judge"
	_ "github.com/slotgate/slotgate/rows/guards/judge"
	_ "github.com/slotgate/slotgate/rows/locality/judge"
	_ "github.com/slotgate/slotgate/rows/marconi/judge"
	_ "github.com/slotgate/slotgate/rows/marconiaudit/judge"
	_ "github.com/slotgate/slotgate/rows/preflight/judge"
	_ "github.com/slotgate/slotgate/rows/presence/judge"
	_ "github.com/slotgate/slotgate/rows/protocol/judge"
	_ "github.com/slotgate/slotgate/rows/registry/judge"
	_ "github.com/slotgate/slotgate/rows/routing/judge"
	_ "github.com/slotgate/slotgate/rows/subscriptions/judge"
	_ "github.com/slotgate/slotgate/rows/telemetry/judge"
)
