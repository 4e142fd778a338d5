package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	locality "github.com/slotgate/slotgate/validate"
)

const validateHelp = `Usage: slotgate validate [--sarif] [dir ...]

The static locality validator (spec 000 §Conformance, "Locality contract"; Axiom A2),
over every .lua file and non-test .go file under each dir (default ./impl); testdata,
vendor and dot directories are skipped below each dir.

Lua (and Lua embedded in Go string literals): every redis.call / redis.pcall must take
its key arguments from KEYS. A key from ARGV, a literal, or a variable not provably bound
to KEYS[n] bypasses the server's slot check and breaks silently once slots split.
  -- slotgate:allow lua/unknown-command <why>   declare a command the key table lacks
  -- slotgate:allow lua/dynamic-command <why>   declare a computed command name
(on the line of the call or the line above; undeclared key access is never waivable).

Go: every multi-key command, script call (client.RunScript, EVAL/EVALSHA, go-redis
Eval*/Script.Run, valkey-go builders), pipeline and MULTI/EXEC transaction must carry
keys that are provably one slot (one hash tag), followed through []string literals,
local and package variables and append. Otherwise the call site declares, on its line
or the line above (or above the key slice's literal), with a reason:
  //slotgate:same-slot <why>            the keys share a slot for a reason not visible here
  //slotgate:per-key-scatter <how>      pipelines only: keys may span slots; <how> says how
                                        a partial failure is reported per key
  //slotgate:disabled-mode-only <why>   deliberately cross-slot, legal only with cluster
                                        mode disabled (A/B scripts, backfill, reverse merge)
A key slice whose content is not visible in the function (a parameter, a field, a
function's result) is left to the runtime twin (validate/locality).

Output: one "file:line: rule: message" per finding, or SARIF 2.1.0 JSON with --sarif.
Exit codes: 0 clean · 1 findings · 2 bad input (e.g. a dir that does not exist).

Flags:
`

// errFindings makes `slotgate validate` exit 1 when any locality finding was reported.
var errFindings = errors.New("locality findings")

// cmdValidate runs the static locality validator (spec 000 A2, Locality contract) over dirs and prints what
// it found; findings return errFindings (exit 1), an unknown dir errUsage (exit 2).
func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sarif := fs.Bool("sarif", false, "write SARIF 2.1.0 JSON to stdout instead of text")
	fs.Usage = func() { fmt.Fprint(stderr, validateHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate validate --help)", errUsage, err)
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		dirs = []string{"./impl"}
	}
	start := time.Now()
	res, err := locality.Dirs(dirs)
	if err != nil {
		if errors.Is(err, locality.ErrBadInput) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	if *sarif {
		if err := locality.WriteSARIF(stdout, res.Findings); err != nil {
			return fmt.Errorf("write sarif: %w", err)
		}
	} else {
		for _, f := range res.Findings {
			fmt.Fprintln(stdout, f)
		}
	}
	fmt.Fprintf(stderr, "validate: %d file(s), %d finding(s) in %s\n", res.Files, len(res.Findings), time.Since(start).Round(time.Microsecond))
	if len(res.Findings) > 0 {
		return fmt.Errorf("%w: %d in %d file(s)", errFindings, len(res.Findings), res.Files)
	}
	return nil
}
