// Command slotgate runs the conformance suites against real Valkey
// topologies, scores every row in two columns (errors | silently-wrong), and
// renders the sign-off report. See `slotgate help`.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes: 0 gate passed, 1 gate failed, 2 bad input (unknown row, bad
// topology, missing binary, port clash, …) — fix the command, not the system.
const (
	exitPass     = 0
	exitGateFail = 1
	exitUsage    = 2
	exitSignal   = 130
)

// version is slotgate's own version, shown in every report.
const version = "0.1.0"

// errUsage marks input errors: the message says what to do; exit 2.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const topHelp = `slotgate — decides whether a Valkey cluster-mode migration is safe to take
through its one-way doors, by running the G2 conformance matrix (spec 000
§Conformance) and the Marconi rows against REAL servers.

Usage:
  slotgate run    [flags]   run the suites, print the scorecard, write the report
  slotgate admit  [flags]   the upgrade gate of a client library: the client-facing rows per release, one admission matrix
  slotgate stability [flags] run the rows N times with fresh seeds: flip table, non-pass cells, replays
  slotgate mutate [flags]   mutants of the implementation (fencing Lua, impl Go) through the rows: kill rate per row
  slotgate report [flags]   re-render the report from a stored results.json
  slotgate check --from DIR re-run the pure checkers on a run's stored histories, offline; diff the scorecard
  slotgate rows             list the rows, the spec section each enforces, and its topology
  slotgate model  [flags]   check the explicit-state model of the fencing migration and kill mutants M1–M9
  slotgate validate [dirs]  the locality validator: every Lua key from KEYS (A2), multi-key Go commands one slot
  slotgate size   [flags]   fan-out sizing (D1): per-node CPU of PUBLISH vs SPUBLISH vs keyed at 1/3/6 shards
  slotgate preflight [flags] the read-only pre-G3 checklist against a running endpoint (--endpoint host:port)
  slotgate help [command]   this text, or a command's flags

Every row is scored in two columns: errors (something failed loudly) and
silently-wrong (an invariant broke and nobody was told). Each check carries
negative controls — known-bad variants it must catch; a row that cannot
catch its own negative control is "blind", never "pass".

Exit codes: 0 gate passed · 1 gate failed · 2 bad input (the message says what to fix) · 130 interrupted.

Examples:
  slotgate run                               # full profile, every implemented row
  slotgate run --profile smoke               # the quick profile CI runs
  slotgate run --row fencing-scripts --seed 42   # one row, replaying seed 42
  slotgate run --provider containers --profile smoke   # the same rows on Docker (make images first)
  slotgate run --provider external --allow-flush --endpoint host:6379   # rows that need no control, on a target
  slotgate preflight --endpoint host:6379    # read-only pre-G3 checks, writes nothing
  slotgate report --from slotgate-report/results.json --out /tmp/r
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topHelp)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		var code int
		code, err = cmdRun(args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "admit":
		var code int
		code, err = cmdAdmit(args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "stability":
		var code int
		code, err = cmdStability(args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "mutate":
		var code int
		code, err = cmdMutate(args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "check":
		var code int
		code, err = cmdCheck(args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "rows":
		err = cmdRows(args[1:], stdout)
	case "model":
		err = cmdModel(args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "size":
		err = cmdSize(args[1:], stdout, stderr)
	case "preflight":
		err = cmdPreflight(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, topHelp)
		return exitPass
	default:
		err = fmt.Errorf("%w: unknown command %q (want run, admit, stability, mutate, report, check, rows, model, validate, size, preflight or help)", errUsage, args[0])
	}
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, errHelp):
		return exitPass
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "slotgate: %v\n", trimUsage(err))
		return exitUsage
	default:
		fmt.Fprintf(stderr, "slotgate: %v\n", err)
		return exitGateFail
	}
}

// errHelp is returned after --help was printed.
var errHelp = errors.New("help shown")

func trimUsage(err error) string {
	const prefix = "usage: "
	s := err.Error()
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}
