package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

const modelHelp = `Usage: slotgate model [--mutant M1..M9|all|none] [--pods N] [--max-gen N] [--traces]

Explores the explicit-state model of the fencing migration (spec 000 §The
Fencing Migration, §Mechanized verification) by breadth-first search: per-pod
upgrade/downgrade, the Deployment Gate (impl/gate's own decisions), acquire
per phase exactly as the Lua scripts, B's renew-migrate, lease loss,
backfill, reverse max-merge, emergency rollback and the mode doors. It checks
Inv_SingleAuthority (T1), Inv_Monotonic (T2) and Inv_SlotRulesSafe (T3) in
every reachable state, then runs each selected mutant and prints the
invariant that killed it with its shortest counterexample.
Exits 0 when the correct model holds every invariant and every selected
mutant is killed by the invariant the spec's table predicts; 1 otherwise;
2 on bad input.

State counts differ from TLC's 12,636 generated / 3,637 distinct because the
state encodings differ (the .tla source is not in this repository, so the
difference is explained, not diffed): the gate's reverse-merged fact is a
state variable here (impl/gate keeps it; without it the distinct count is
4,117), stutter steps (an acquire that finds the lease held) are not
generated, and a pod is replaced straight onto the target phase, as the relay
fleet does. See the model package comment.

Flags:
`

// modelTLCGenerated and modelTLCDistinct are the spec's TLC run (Pods = 3,
// MaxGen = 4), printed next to ours.
const modelTLCGenerated, modelTLCDistinct = 12636, 3637

func cmdModel(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mutant := fs.String("mutant", "all", "mutants to run besides the correct model: M1..M9, a comma list, all, or none")
	pods := fs.Int("pods", model.DefaultPods, fmt.Sprintf("pods in the fleet (1..%d)", model.MaxPods))
	maxGen := fs.Int("max-gen", model.DefaultMaxGen, "finiteness bound: the highest generation an acquire may issue")
	traces := fs.Bool("traces", false, "print every counterexample trace, not just its length")
	fs.Usage = func() { fmt.Fprint(stderr, modelHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate model --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (see slotgate model --help)", errUsage, fs.Arg(0))
	}
	if *pods < 1 || *pods > model.MaxPods {
		return fmt.Errorf("%w: --pods %d: want 1..%d", errUsage, *pods, model.MaxPods)
	}
	if *maxGen < 1 {
		return fmt.Errorf("%w: --max-gen %d: want at least 1", errUsage, *maxGen)
	}
	mutants, err := parseMutants(*mutant)
	if err != nil {
		return err
	}
	correct, err := model.New(model.Config{Pods: *pods, MaxGen: *maxGen})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var names []string
	for _, inv := range model.Invariants {
		names = append(names, inv.Name)
	}
	cfg := correct.Config()
	fmt.Fprintf(stdout, "model: one session, %d pods, MaxGen %d; invariants checked: %s\n", cfg.Pods, cfg.MaxGen, strings.Join(names, ", "))
	res := correct.Explore()
	fmt.Fprintf(stdout, "correct: %d states generated, %d distinct states found, depth %d, %d terminal", res.Generated, res.Distinct, res.Depth, res.Terminal)
	if cfg.Pods == model.DefaultPods && cfg.MaxGen == model.DefaultMaxGen {
		fmt.Fprintf(stdout, " (TLC: %d generated, %d distinct; encodings differ, see --help)", modelTLCGenerated, modelTLCDistinct)
	}
	fmt.Fprintln(stdout)
	var failed []string
	if len(res.Violations) == 0 {
		fmt.Fprintln(stdout, "correct: no invariant violated")
	}
	for _, v := range res.Violations {
		failed = append(failed, "correct model violates "+v.Invariant)
		fmt.Fprintf(stdout, "correct: VIOLATES %s in %d steps:\n%s", v.Invariant, v.Trace.Len(), correct.FormatTrace(v.Trace))
	}
	// The read side (lookup, known_generation, validate_fenced_header): no
	// transition, so the same state space; Inv_ReadSide over every state.
	reachable := correct.Reachable()
	if rr := correct.CheckReads(reachable); rr.Violation != nil {
		failed = append(failed, "correct model violates "+model.InvReadSide)
		fmt.Fprintf(stdout, "correct: VIOLATES %s in %d steps (%s):\n%s", model.InvReadSide, rr.Violation.Trace.Len(), rr.Why, correct.FormatTrace(rr.Violation.Trace))
	} else {
		fmt.Fprintf(stdout, "correct: %s holds in all %d states (%d read evaluations: every pod's lookup, known_generation and validate_fenced_header)\n", model.InvReadSide, rr.States, rr.Reads)
	}
	if len(mutants) > 0 {
		for _, rm := range fencing.ReadMutants {
			m, err := model.New(model.Config{Pods: *pods, MaxGen: *maxGen, Read: rm})
			if err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			rr := m.CheckReads(reachable)
			if rr.Violation == nil {
				failed = append(failed, fmt.Sprintf("read mutant %s not killed by %s", rm, model.InvReadSide))
				fmt.Fprintf(stdout, "read %s SURVIVED %s\n", rm, model.InvReadSide)
				continue
			}
			fmt.Fprintf(stdout, "read %s killed by %s, counterexample %d steps: %s\n", rm, model.InvReadSide, rr.Violation.Trace.Len(), rr.Why)
		}
	}
	for _, mu := range mutants {
		m, err := model.New(model.Config{Pods: *pods, MaxGen: *maxGen, Mutant: mu})
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		r := m.Explore()
		v, killed := r.Violated(mu.Trips())
		if !killed {
			var got []string
			for _, o := range r.Violations {
				got = append(got, o.Invariant)
			}
			failed = append(failed, fmt.Sprintf("%s not killed by %s", mu, mu.Trips()))
			fmt.Fprintf(stdout, "%-3s SURVIVED %s (violated: %s; %d distinct states)\n", mu, mu.Trips(), orNone(got), r.Distinct)
			continue
		}
		also := ""
		for _, o := range r.Violations {
			if o.Invariant != v.Invariant {
				also += fmt.Sprintf("; also %s in %d", o.Invariant, o.Trace.Len())
			}
		}
		fmt.Fprintf(stdout, "%-3s killed by %s, counterexample %d steps%s (%d distinct states)\n", mu, v.Invariant, v.Trace.Len(), also, r.Distinct)
		if *traces {
			fmt.Fprint(stdout, m.FormatTrace(v.Trace))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("model check failed: %s", strings.Join(failed, "; "))
	}
	if len(mutants) > 0 {
		fmt.Fprintf(stdout, "all %d mutants killed by the predicted invariant\n", len(mutants))
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// parseMutants reads --mutant: all, none, or a comma list of M1..M9.
func parseMutants(s string) ([]fencing.MigrationMutant, error) {
	switch strings.TrimSpace(s) {
	case "all":
		return fencing.MigrationMutants, nil
	case "none", "":
		return nil, nil
	}
	var out []fencing.MigrationMutant
	for _, part := range strings.Split(s, ",") {
		m := fencing.MigrationMutant(strings.ToUpper(strings.TrimSpace(part)))
		known := false
		for _, k := range fencing.MigrationMutants {
			known = known || k == m
		}
		if !known {
			return nil, fmt.Errorf("%w: unknown mutant %q (want M1..M9, all or none)", errUsage, part)
		}
		out = append(out, m)
	}
	return out, nil
}
