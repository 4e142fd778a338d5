package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slotgate/slotgate/report"
)

const reportHelp = `Usage: slotgate report --from results.json [--out DIR]
       slotgate report [--out DIR] --merge SHARD_DIR|results.json ...

Re-renders the report (results.json, junit.xml, summary.md, report.html) from
a stored results.json — e.g. one a CI run archived — and prints the scorecard.
With --merge it joins the results of a sharded run (slotgate run --shard i/n,
one directory or results.json per shard; flags before the shards) into one
scorecard: a shard that is missing leaves its rows "not run" and fails the
merged gate. Exits 0 when the (merged) run passed its gate, 1 when it did
not, 2 on bad input.

Flags:
`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "results.json written by `slotgate run` (required)")
	out := fs.String("out", "", "directory to write the rendered report into (default: print the scorecard only)")
	merge := fs.Bool("merge", false, "merge the shards' results given as arguments (directories holding results.json, or the files)")
	fs.Usage = func() { fmt.Fprint(stderr, reportHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate report --help)", errUsage, err)
	}
	var card *report.Scorecard
	switch {
	case *merge && *from != "":
		return fmt.Errorf("%w: give either --from or --merge, not both", errUsage)
	case *merge:
		if fs.NArg() == 0 {
			return fmt.Errorf("%w: --merge needs the shards' results: one directory (or results.json) per shard, after the flags", errUsage)
		}
		var cards []*report.Scorecard
		for _, arg := range fs.Args() {
			c, err := readResults(arg)
			if err != nil {
				return err
			}
			cards = append(cards, c)
		}
		var err error
		if card, err = report.Merge(cards...); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	case *from == "":
		return fmt.Errorf("%w: --from is required: the results.json of a run (e.g. slotgate-report/results.json)", errUsage)
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q (did you mean --merge?)", errUsage, fs.Arg(0))
	default:
		var err error
		if card, err = readResults(*from); err != nil {
			return err
		}
	}
	if *out != "" {
		// A run writing there would overwrite this, or be overwritten.
		dir, lock, err := openOut(*out)
		if err != nil {
			return err
		}
		defer lock.release()
		paths, err := report.WriteAll(dir, card)
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

// readResults reads a results.json, or the one inside a report directory.
func readResults(path string) (*report.Scorecard, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "results.json")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", errUsage, path, err)
	}
	defer f.Close()
	card, err := report.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a slotgate results.json: %v", errUsage, path, err)
	}
	return card, nil
}

// errGateFailed makes `slotgate report` exit 1 for a failed stored run.
var errGateFailed = errors.New("the stored run did not pass its gate")
