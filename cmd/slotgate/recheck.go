package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/recheck"
)

const checkHelp = `Usage: slotgate check --from DIR

Re-runs the pure checkers on the histories a run stored (DIR/histories, one
gzipped JSON Lines file per scenario, at most %d MB each) and rebuilds the
scorecard of DIR/results.json with no server running: every check whose
result and negative controls were judged through a registered checker is
rebuilt from its stored input, and every cell is compared byte for byte with
the stored one. Checks whose history holds no replayable judgement are kept
as stored and listed as "not persisted" — never counted as reproduced.
This is how a reviewer replays a run's verdicts on a laptop.

Exits 0 when every cell is identical, 1 on any difference (the differing
checks and cells are listed), 2 on bad input.

Flags:
`

func cmdCheck(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "a run's out directory (results.json and histories/)")
	verbose := fs.Bool("v", false, "list every reproduced check too")
	fs.Usage = func() { fmt.Fprintf(stderr, checkHelp, history.MaxBytes>>20); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, errHelp
		}
		return 0, fmt.Errorf("%w: %v (see slotgate check --help)", errUsage, err)
	}
	if *from == "" || fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: want --from DIR, the out directory of a run (e.g. slotgate-report)", errUsage)
	}
	o, _, err := recheck.FromDir(*from)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	fmt.Fprintf(stdout, "checks: %d — %d reproduced from their histories, %d not persisted, %d differ\n",
		o.Checks, len(o.Reproduced), len(o.NotPersisted), len(o.Differ))
	if *verbose {
		list(stdout, "reproduced", o.Reproduced)
	}
	list(stdout, "not persisted (taken as stored, not re-checked)", o.NotPersisted)
	list(stdout, "DIFFER", o.Differ)
	list(stdout, "crashed before judged (partial history stored, no check)", o.Crashed)
	fmt.Fprintf(stdout, "cells: %d — %d identical and re-checked, %d identical holding a not-persisted check, %d differ, %d not run\n",
		o.Cells, o.CellsSame, o.CellsStored, len(o.CellsDiffer), o.CellsEmpty)
	list(stdout, "DIFFERING CELLS", o.CellsDiffer)
	if !o.Identical() {
		return exitGateFail, nil
	}
	if o.Checks > 0 && len(o.Reproduced) == 0 {
		// Nothing was re-checked: a re-check that cannot fail proves
		// nothing (no histories stored, or none persisted a checker).
		fmt.Fprintln(stdout, "no check could be re-run from its history: nothing was re-checked")
		return exitGateFail, nil
	}
	return exitPass, nil
}

func list(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n  %s\n", title, strings.Join(items, "\n  "))
}
