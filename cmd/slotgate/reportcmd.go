package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/slotgate/slotgate/report"
)

const reportHelp = `Usage: slotgate report --from results.json [--out DIR]

Re-renders the report (results.json, junit.xml, summary.md, report.html) from
a stored results.json — e.g. one a CI run archived — and prints the scorecard.
Exits 0 when the stored run passed its gate, 1 when it did not.

Flags:
`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "results.json written by `slotgate run` (required)")
	out := fs.String("out", "", "directory to write the rendered report into (default: print the scorecard only)")
	fs.Usage = func() { fmt.Fprint(stderr, reportHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate report --help)", errUsage, err)
	}
	if *from == "" {
		return fmt.Errorf("%w: --from is required: the results.json of a run (e.g. slotgate-report/results.json)", errUsage)
	}
	f, err := os.Open(*from)
	if err != nil {
		return fmt.Errorf("%w: cannot read --from: %v", errUsage, err)
	}
	defer f.Close()
	card, err := report.ReadJSON(f)
	if err != nil {
		return fmt.Errorf("%w: %s is not a slotgate results.json: %v", errUsage, *from, err)
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("%w: cannot create --out %s: %v", errUsage, *out, err)
		}
		lock, err := lockOut(*out) // a run writing there would overwrite this, or be overwritten
		if err != nil {
			return err
		}
		defer lock.release()
		paths, err := report.WriteAll(*out, card)
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		defer fmt.Fprintf(stdout, "report: %s\n", paths.HTML)
	}
	report.WriteTerminal(stdout, card, isTerminal(stdout))
	if pass, _ := card.Gate(); !pass {
		return errGateFailed
	}
	return nil
}

// errGateFailed makes `slotgate report` exit 1 for a failed stored run.
var errGateFailed = errors.New("the stored run did not pass its gate")
