package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/slotgate/slotgate/report"
)

// suiteOf maps each implemented row to the suite package that scores it.
// A catalogue row missing here is known but not yet implemented: it shows
// as not-run and is never counted as passed.
var suiteOf = map[report.RowID]string{
	report.RowAxioms:           "./suites/axioms",
	report.RowFencingScripts:   "./suites/fencing",
	report.RowFencingMigration: "./suites/migration",
	report.RowPresenceMGet:     "./suites/presence",
	report.RowRegistry:         "./suites/registry",
	report.RowSubscriptions:    "./suites/subscriptions",
	report.RowRouting:          "./suites/routing",
	report.RowFailureDrills:    "./suites/failuredrills",
	report.RowProtocol:         "./suites/protocol",
	report.RowTelemetry:        "./suites/telemetry",
	report.RowLocality:         "./suites/locality",

	// Marconi mesh (spec 002).
	report.RowMarconiHotPath:        "./suites/marconi",
	report.RowMarconiCacheLifecycle: "./suites/marconi",
	report.RowMarconiRestart:        "./suites/marconi",

	// Marconi audit fan-out (spec 002 §3.6, §4).
	report.RowMarconiAuditCompleteness: "./suites/marconiaudit",
	report.RowMarconiLossBudget:        "./suites/marconiaudit",
	report.RowMarconiStream:            "./suites/marconiaudit",
}

func implemented(id report.RowID) bool { _, ok := suiteOf[id]; return ok }

// parseRows validates a comma list of row ids; empty means every
// implemented row.
func parseRows(s string) ([]report.RowID, error) {
	if strings.TrimSpace(s) == "" {
		var all []report.RowID
		for _, r := range report.Catalogue {
			if implemented(r.ID) {
				all = append(all, r.ID)
			}
		}
		return all, nil
	}
	var out []report.RowID
	seen := map[report.RowID]bool{}
	for _, part := range strings.Split(s, ",") {
		id := report.RowID(strings.TrimSpace(part))
		if _, ok := report.Lookup(id); !ok {
			return nil, fmt.Errorf("%w: unknown row %q; `slotgate rows` lists them: %s", errUsage, id, rowIDs())
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

func rowIDs() string {
	ids := make([]string, len(report.Catalogue))
	for i, r := range report.Catalogue {
		ids[i] = string(r.ID)
	}
	return strings.Join(ids, ", ")
}

func cmdRows(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("rows", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintln(stdout, "Usage: slotgate rows\n\nLists every row: id, whether this build implements it, topology, and the spec section it enforces.")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tSTATE\tTOPOLOGY\tSPEC")
	for _, r := range report.Catalogue {
		state := "planned"
		if implemented(r.ID) {
			state = "implemented"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, state, r.Topology, r.Spec)
	}
	return tw.Flush()
}
