package mutate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/mutate/schema"
	"github.com/slotgate/slotgate/mutate/schema/script"
	"github.com/slotgate/slotgate/report"
)

// Why Go mutants run only the specs whose coverage reaches them:
// running every spec of a mutant's rows cost ~3 minutes a mutant on 2
// cores, most of it specs that never execute the mutated function. Cover
// runs each spec of the covering rows once, alone, from suite binaries
// built with Go coverage of the target packages — that run is also the Go
// mutants' baseline, which they did not have — and records which blocks of
// impl it executed. A mutant then runs only the specs whose baseline
// reached the mutated node (gomut.Profile.Reaches), from suites compiled in
// a copy of the module holding the mutant; a mutant no spec reaches is a
// survivor marked "not covered".
//
// A unit is one spec, or every spec of one Ordered container (their steps
// depend on each other, so they run together).

// goBuildFlags are the Go mutants' `go test -c` flags, as `ginkgo run`
// builds (the whole-row path did): no vet (a mutant's package changed, so
// go test would re-vet it and every package between it and the suite) and
// no DWARF or symbol table (a faster link; stack traces keep their
// pclntab). Measured: the mutant's compile was 21–43 s a mutant at load ~10
// without them, against ~10 s for the whole-row path's.
var goBuildFlags = []string{"-vet=off", "-ldflags=-w -s"}

// ErrBaseline is a spec that fails with the unmutated code (twice): no kill
// by it could be trusted, so the run stops and the gate fails.
var ErrBaseline = errors.New("baseline does not pass")

// ErrSchemata is a spec that fails with the schemata build and no mutant
// active but passes with the original code: the schemata changed
// behaviour, so every verdict they would give is suspect (a schema that
// breaks the code would "kill" every mutant). The run stops; it is not
// the gate's verdict but a broken tool.
var ErrSchemata = errors.New("the schemata build with no mutant active does not behave as the original code")

// goUnit is one spec (or Ordered group) of a suite and what its baseline
// run covered.
type goUnit struct {
	pkg   string         // ./rows/registry
	rows  []report.RowID // the requested rows the spec is labelled with
	name  string         // its full text (the group's container text)
	focus string         // an anchored --ginkgo.focus for exactly it
	cover gomut.Profile
	secs  float64 // its baseline run
}

// GoRunner runs Go mutants of impl (mutate/gomut) through the specs that
// reach them.
type GoRunner struct {
	Root    string   // the module root (the working tree; only read)
	Work    string   // scratch directory
	Env     []string // SLOTGATE_PROFILE, _SEED, _SERVER, _BACKENDS, _OWNER (as the Lua runner's)
	Timeout time.Duration
	Log     io.Writer
	// Schemata, when set, are compiled into the suites once (Cover builds
	// them from a copy of the module holding the schema files, with
	// coverage): a mutant they hold runs those binaries with
	// SLOTGATE_MUTANT=<id>, any other is built on its own. The baseline
	// runs the same binaries with no mutant active — the proof that the
	// schemata do not change behaviour (ErrSchemata when they do).
	Schemata *gomut.Schemata
	// BuildSeconds is Cover's build of the suites (with the schemata).
	BuildSeconds float64
	// Order fixes Ginkgo's spec order (RunArgs.Order) in every run, so the
	// same mutant is named the same killer by either build mode.
	Order int64
	// Static, when set, judges a mutant in-process before any spec runs
	// (embedded-Lua mutants: the locality row's static validator, as the
	// fencing Lua mutants get it, LuaRunner.Static).
	Static func(Mutant) (Kill, bool)
	// Jobs is how many suite processes run at once: the baseline's units
	// (Cover) and, in the caller's pool, mutants (Run is safe to call
	// concurrently). < 1 means 1.
	Jobs int

	modPath string
	units   []goUnit
	bins    *Suites // Cover's build
	release func()  // frees the schemata copy
}

// Close removes the schemata copy.
func (r *GoRunner) Close() {
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// specList is the part of a Ginkgo JSON report Cover reads from a dry run:
// which specs the label filter selects, their text and whether they sit in
// an Ordered container.
type specList []struct {
	SuiteDescription string
	SpecReports      []struct {
		ContainerHierarchyTexts  []string
		ContainerHierarchyLabels [][]string
		LeafNodeType             string
		LeafNodeText             string
		LeafNodeLabels           []string
		State                    string
		IsInOrderedContainer     bool
	}
}

// Cover builds the coverage map for rows: the suites of rows compiled once
// with coverage of the target packages pkgs (module-relative dirs), every
// spec of rows listed (a Ginkgo dry run) and run alone with the unmutated
// code. Each unit must pass (two attempts, as the Lua baseline): a spec
// that fails with the original code would make every kill meaningless, so
// an error stops the run.
func (r *GoRunner) Cover(ctx context.Context, rows []report.RowID, pkgs []string, progress func(string)) error {
	mod, err := gomut.ModulePath(r.Root)
	if err != nil {
		return fmt.Errorf("coverage map: %w", err)
	}
	r.modPath = mod
	if err := os.MkdirAll(r.Work, 0o755); err != nil {
		return fmt.Errorf("coverage map: %w", err)
	}
	bySuite := map[string][]report.RowID{}
	var suites []string
	for _, row := range rows {
		def, ok := report.Lookup(row)
		if !ok || def.Suite == "" {
			return fmt.Errorf("coverage map: row %s has no suite", row)
		}
		if !slices.Contains(suites, def.Suite) {
			suites = append(suites, def.Suite)
		}
		bySuite[def.Suite] = append(bySuite[def.Suite], row)
	}
	imports := make([]string, len(pkgs))
	for i, p := range pkgs {
		imports[i] = path.Join(mod, p)
	}
	began := time.Now()
	coverFlags := append(slices.Clone(goBuildFlags), "-cover", "-covermode=set", "-coverpkg="+strings.Join(imports, ","))
	src, what := r.Root, ""
	if r.Schemata != nil {
		dir, release, err := gomut.PrepareSchemata(r.Root, r.Schemata)
		if err != nil {
			return fmt.Errorf("coverage map: %w", err)
		}
		r.release, src = release, dir
		what = fmt.Sprintf(" and the schemata of %d mutants", len(r.Schemata.In))
	}
	bins, err := buildSuites(ctx, src, filepath.Join(r.Work, "cover-bin"), suites, coverFlags, r.Log)
	if err != nil {
		return fmt.Errorf("coverage map: %w", err)
	}
	r.bins = bins
	r.BuildSeconds = time.Since(began).Seconds()
	progress(fmt.Sprintf("built %s with coverage of %s%s in %s", strings.Join(suites, ", "), strings.Join(pkgs, ", "), what, time.Since(began).Round(time.Second)))
	var all []goUnit
	for _, s := range suites {
		units, err := r.list(ctx, bins, s, bySuite[s])
		if err != nil {
			return fmt.Errorf("coverage map: %w", err)
		}
		if len(units) == 0 {
			return fmt.Errorf("coverage map: %s selects no spec of %v", s, bySuite[s])
		}
		all = append(all, units...)
	}
	// Every unit alone, up to Jobs at once (each its own process, topology
	// and scratch directory); the first failure stops handing out more.
	errs := make([]error, len(all))
	var mu sync.Mutex
	failed := false
	Pool(inOrder(len(all)), r.Jobs, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failed || ctx.Err() != nil
	}, func(i int) {
		err := r.coverUnit(ctx, bins, &all[i], i)
		mu.Lock()
		defer mu.Unlock()
		if errs[i] = err; err != nil {
			failed = true
			return
		}
		progress(fmt.Sprintf("baseline %s %q passed in %.0fs", all[i].pkg, all[i].name, all[i].secs))
	})
	for i, err := range errs {
		if err == nil {
			continue
		}
		if r.Schemata == nil || !errors.Is(err, ErrBaseline) {
			return fmt.Errorf("coverage map: %w", err)
		}
		schemaErr := err
		// Whose failure: the schemata's, or the code's own?
		orig, err := buildSuites(ctx, r.Root, filepath.Join(r.Work, "orig-bin"), suites, coverFlags, r.Log)
		if err != nil {
			return fmt.Errorf("coverage map: %w", err)
		}
		u := all[i]
		if err2 := r.coverUnit(ctx, orig, &u, i); err2 != nil {
			return fmt.Errorf("coverage map: %w", err2)
		}
		return fmt.Errorf("coverage map: %w: %s fails with every mutant off and passes with the original code; with the schemata: %v", ErrSchemata, u.name, schemaErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("coverage map: %w", ctx.Err())
	}
	r.units = all
	return nil
}

// list runs suite's binary as a Ginkgo dry run (no spec body, no setup
// node runs) and returns its units: one per spec, one per Ordered group.
func (r *GoRunner) list(ctx context.Context, bins *Suites, suite string, rows []report.RowID) ([]goUnit, error) {
	bin, ok := bins.bins[suite]
	if !ok {
		return nil, fmt.Errorf("suite %s was not built", suite)
	}
	js := filepath.Join(r.Work, "list.json")
	_ = os.Remove(js)
	labels := make([]string, len(rows))
	for i, row := range rows {
		labels[i] = string(row)
	}
	cmd := exec.CommandContext(ctx, bin, "--ginkgo.dry-run", "--ginkgo.label-filter="+strings.Join(labels, " || "), "--ginkgo.json-report="+js)
	cmd.Dir = filepath.Join(bins.Root, filepath.FromSlash(strings.TrimPrefix(suite, "./")))
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stdout, cmd.Stderr = r.Log, r.Log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("list specs of %s: %w", suite, err)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		return nil, fmt.Errorf("list specs of %s: %w", suite, err)
	}
	var reps specList
	if err := json.Unmarshal(b, &reps); err != nil {
		return nil, fmt.Errorf("list specs of %s: %w", suite, err)
	}
	return unitsOf(reps, suite, rows), nil
}

// unitsOf turns a dry run's report into units: one per spec the label
// filter selected, one per Ordered group.
func unitsOf(reps specList, suite string, rows []report.RowID) []goUnit {
	var units []goUnit
	seen := map[string]int{}
	for _, rep := range reps {
		for _, sp := range rep.SpecReports {
			if sp.LeafNodeType != "It" || sp.State == "skipped" || sp.State == "pending" {
				continue
			}
			var labelled []report.RowID
			has := func(ls []string) {
				for _, l := range ls {
					if slices.Contains(rows, report.RowID(l)) && !slices.Contains(labelled, report.RowID(l)) {
						labelled = append(labelled, report.RowID(l))
					}
				}
			}
			has(sp.LeafNodeLabels)
			for _, ls := range sp.ContainerHierarchyLabels {
				has(ls)
			}
			// Ginkgo matches --focus against "<suite description> <full
			// text>" (the non-empty texts joined by spaces).
			texts := slices.DeleteFunc(slices.Clone(sp.ContainerHierarchyTexts), func(s string) bool { return s == "" })
			name, focus := "", ""
			if sp.IsInOrderedContainer && len(texts) > 0 {
				name = strings.Join(texts, " ")
				focus = "^" + regexp.QuoteMeta(rep.SuiteDescription+" "+name+" ")
			} else {
				name = strings.Join(append(texts, sp.LeafNodeText), " ")
				focus = "^" + regexp.QuoteMeta(rep.SuiteDescription+" "+name) + "$"
			}
			if i, ok := seen[focus]; ok {
				for _, row := range labelled {
					if !slices.Contains(units[i].rows, row) {
						units[i].rows = append(units[i].rows, row)
					}
				}
				continue
			}
			seen[focus] = len(units)
			units = append(units, goUnit{pkg: suite, rows: labelled, name: name, focus: focus})
		}
	}
	return units
}

// coverUnit runs one unit with the unmutated code and coverage on, and
// keeps what it reached. GOCOVERDIR reaches the processes a spec re-execs
// from its own binary (fixtures.Self: the archiver process), so their
// coverage counts too.
func (r *GoRunner) coverUnit(ctx context.Context, bins *Suites, u *goUnit, i int) error {
	st := Stage{Pkg: u.pkg, Rows: u.rows, Focus: u.focus}
	var bad []string
	for attempt := 1; attempt <= 2; attempt++ {
		dir := filepath.Join(r.Work, "cover", fmt.Sprintf("%d-%d", i, attempt))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("baseline %s: %w", u.name, err)
		}
		began := time.Now()
		// No mutant active, whatever the caller's environment says.
		card, err := bins.Run(ctx, st, RunArgs{Env: append(slices.Clone(r.Env), "GOCOVERDIR="+dir, schema.EnvMutant+"="),
			JSON: filepath.Join(dir, "cover.json"), Log: r.Log, Timeout: r.Timeout, Args: []string{"-test.gocoverdir=" + dir}, Order: r.Order})
		if err != nil {
			return fmt.Errorf("baseline %s: %w", u.name, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("baseline %s: %w", u.name, ctx.Err())
		}
		if bad = Failing(card); len(bad) == 0 && !Scored(card, u.rows) {
			bad = []string{"it scored no cell of " + fmt.Sprint(u.rows)}
		}
		if len(bad) > 0 {
			fmt.Fprintf(r.Log, "slotgate mutate: baseline %s attempt %d did not pass: %s\n", u.name, attempt, bad[0])
			continue
		}
		u.secs = time.Since(began).Seconds()
		prof := filepath.Join(dir, "profile.txt")
		cmd := exec.CommandContext(ctx, "go", "tool", "covdata", "textfmt", "-i="+dir, "-o="+prof)
		cmd.Stdout, cmd.Stderr = r.Log, r.Log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("baseline %s: covdata textfmt: %w", u.name, err)
		}
		f, err := os.Open(prof)
		if err != nil {
			return fmt.Errorf("baseline %s: %w", u.name, err)
		}
		defer f.Close()
		if u.cover, err = gomut.ParseProfile(f, r.modPath); err != nil {
			return fmt.Errorf("baseline %s: %w", u.name, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s fails with the unmutated code, so no kill could be trusted:\n  %s", ErrBaseline, u.name, strings.Join(bad, "\n  "))
}

// Reaching returns the units of m's rows whose baseline reached g's code.
func (r *GoRunner) reaching(m Mutant, g gomut.Mutant) []goUnit {
	if r.Schemata != nil {
		g = r.Schemata.Locate(g) // the baseline ran the schema files
	}
	var out []goUnit
	for _, u := range r.units {
		if slices.ContainsFunc(u.rows, func(row report.RowID) bool { return slices.Contains(m.Rows, row) }) && u.cover.Reaches(g) {
			out = append(out, u)
		}
	}
	return out
}

// Cost is what m's runs are expected to take: the baseline seconds of the
// specs that reach it (0 for a mutant no spec runs). A pool hands out the
// costliest first (LongestFirst); a killed mutant stops sooner.
func (r *GoRunner) Cost(m Mutant, g gomut.Mutant) float64 {
	if _, ok := Equivalents[m.ID]; ok || g.Equivalent != "" {
		return 0
	}
	t := 0.0
	for _, u := range r.reaching(m, g) {
		t += u.secs
	}
	return t
}

// Run runs one Go mutant through the specs whose coverage reaches it. It
// is safe to call for several mutants at once (GoRunner.Jobs): each call
// has its own scratch directory and suite processes. The scoring is the Go mutants' as before: a failing check kills; a suite
// crash (a failed node with no row's check) kills only if a second run
// repeats it; a run that scored no cell is an error; a suite that does not
// compile in the copy is an error, never a kill.
func (r *GoRunner) Run(ctx context.Context, m Mutant, g gomut.Mutant) (res Result) {
	began := time.Now()
	res = Result{Mutant: m, Status: Survived}
	defer func() { res.Seconds = time.Since(began).Seconds() }()
	if reason, ok := Equivalents[m.ID]; ok {
		res.Status, res.Reason = Equivalent, reason
		return res
	}
	if g.Equivalent != "" {
		res.Status, res.Reason = Equivalent, g.Equivalent
		return res
	}
	if r.Static != nil {
		res.Ran = append(res.Ran, report.RowLocality)
		if k, ok := r.Static(m); ok {
			res.Status, res.Killer, res.Kills = Killed, &k, []Kill{k}
			return res
		}
	}
	units := r.reaching(m, g)
	if len(units) == 0 {
		n := 0
		for _, u := range r.units {
			if slices.ContainsFunc(u.rows, func(row report.RowID) bool { return slices.Contains(m.Rows, row) }) {
				n++
			}
		}
		res.Reason = fmt.Sprintf("not covered: none of the %d specs of %s reached %s:%d (%s) in its baseline run", n, joinRowIDs(m.Rows), m.File, m.Line, m.Func)
		return res
	}
	// One stage per suite package, in the order Cover met them.
	var stages []Stage
	for _, u := range units {
		i := slices.IndexFunc(stages, func(s Stage) bool { return s.Pkg == u.pkg })
		if i < 0 {
			stages = append(stages, Stage{Pkg: u.pkg})
			i = len(stages) - 1
		}
		st := &stages[i]
		if st.Focus != "" {
			st.Focus += "|"
		}
		st.Focus += u.focus
		for _, row := range u.rows {
			if slices.Contains(m.Rows, row) && !slices.Contains(st.Rows, row) {
				st.Rows = append(st.Rows, row)
			}
		}
	}
	res.Specs = len(units)
	for _, st := range stages {
		for _, row := range st.Rows {
			if !slices.Contains(res.Ran, row) {
				res.Ran = append(res.Ran, row)
			}
		}
	}
	suites, env, args := r.bins, slices.Clone(r.Env), []string(nil)
	servedLog := ""
	// Its own scratch directory: another mutant may be running beside it.
	scratch, err := os.MkdirTemp(r.Work, "mutant-")
	if err != nil {
		res.Status, res.Reason = Error, err.Error()
		return res
	}
	defer os.RemoveAll(scratch)
	if g.Served != "" && (r.Schemata == nil || !r.Schemata.In[g.ID] || r.bins == nil) {
		// An embedded script's mutant exists only in the schemata build.
		res.Status, res.Reason = Error, "embedded-Lua mutant not in the schemata build"
		return res
	}
	if r.Schemata != nil && r.Schemata.In[g.ID] && r.bins != nil {
		// The schemata build holds it: switch it on. The binaries have
		// coverage on; its data goes to a scratch directory, dropped.
		cov := filepath.Join(scratch, "cover")
		if err := os.MkdirAll(cov, 0o755); err != nil {
			res.Status, res.Reason = Error, err.Error()
			return res
		}
		env = append(env, schema.EnvMutant+"="+g.ID, "GOCOVERDIR="+cov)
		args = []string{"-test.gocoverdir=" + cov}
		res.Schema = true
		if g.Served != "" {
			// An embedded-Lua mutant: the build reports each time it
			// serves the mutated script, checked below.
			servedLog = filepath.Join(scratch, "served")
			env = append(env, script.EnvServed+"="+servedLog)
		}
	} else {
		dir, release, err := gomut.Prepare(r.Root, g)
		if err != nil {
			res.Status, res.Reason = Error, err.Error()
			return res
		}
		defer release()
		pkgs := make([]string, len(stages))
		for i, st := range stages {
			pkgs[i] = st.Pkg
		}
		b := time.Now()
		suites, err = buildSuites(ctx, dir, filepath.Join(scratch, "bin"), pkgs, goBuildFlags, r.Log)
		res.BuildSeconds = time.Since(b).Seconds()
		if err != nil {
			// Generate type-checked the mutant, so a suite that does not
			// compile means the tree changed under the run: never a kill.
			res.Status, res.Reason = Error, fmt.Sprintf("%v: %v", gomut.ErrBuild, err)
			return res
		}
		env = append(env, schema.EnvMutant+"=")
	}
	runOnce := func(st Stage) (Kill, bool, *report.Scorecard, error) {
		if servedLog != "" {
			// Each run proves for itself that it served the mutant: a
			// later stage's verdict must not stand on an earlier one's log.
			_ = os.Remove(servedLog)
		}
		card, err := suites.Run(ctx, st, RunArgs{Env: env, Args: args, JSON: filepath.Join(scratch, "report.json"), Log: r.Log, Timeout: r.Timeout, Order: r.Order})
		var crash *SuiteCrash
		if errors.As(err, &crash) && crash.In(path.Dir(g.File)) && ctx.Err() == nil {
			// The mutated code panicked in a goroutine of its own and took
			// the process down before any report: loud, so a kill — once a
			// second run repeats it (below, as for any suite-level failure).
			// The no-mutant baseline passed this stage, and the stack runs
			// through the mutated package.
			return Kill{Row: st.Rows[0], Check: "suite", Status: report.StatusFail, Message: crash.Error()}, true, nil, nil
		}
		if err != nil {
			return Kill{}, false, nil, err
		}
		if ctx.Err() != nil {
			return Kill{}, false, nil, errors.New("interrupted")
		}
		k, ok := Killer(card, st.Rows)
		if !ok && !Scored(card, st.Rows) {
			return Kill{}, false, nil, fmt.Errorf("stage %s scored no cell (the suite crashed, timed out or selected no spec)", st.Pkg)
		}
		return k, ok, card, nil
	}
	for _, st := range stages {
		k, killed, card, err := runOnce(st)
		if err == nil && !killed && undecided(card, st.Rows) != "" {
			// Fail-fast stopped at a spec that failed without killing (a
			// blind check): the specs after it never ran. Judge them all.
			st.KeepGoing = true
			k, killed, card, err = runOnce(st)
		}
		if err == nil && !killed && res.Reason == "" {
			res.Reason = undecided(card, st.Rows)
		}
		if err == nil && killed && k.Check == "suite" {
			// A suite-level failure (a panic, a fixture that did not
			// start) is the mutant's only if it happens again: a loaded
			// runner can fail a suite too.
			if k2, again, _, err2 := runOnce(st); err2 != nil || !again || k2.Check != "suite" {
				k, killed, err = Kill{}, false, fmt.Errorf("unconfirmed crash: %s (a second run did not repeat it)", k.Message)
			}
		}
		if err == nil && servedLog != "" {
			err = checkServed(servedLog, g)
		}
		switch {
		case err != nil:
			res.Status, res.Reason = Error, err.Error()
			return res
		case killed:
			res.Status, res.Killer, res.Kills = Killed, &k, []Kill{k}
			return res
		}
	}
	if res.Reason == "" {
		res.Reason = fmt.Sprintf("ran by the %d of its rows' specs whose baseline reached it", len(units))
	}
	return res
}

// undecided names the first check of rows that neither passed nor failed
// (blind, unknown, inconclusive): no kill, but not a clean pass either —
// under fail-fast it also stopped the specs after it. "" when none.
func undecided(card *report.Scorecard, rows []report.RowID) string {
	for _, c := range card.Cells {
		if !slices.Contains(rows, c.Row) {
			continue
		}
		for _, ch := range c.Checks {
			v := ch.Status
			if v == report.StatusPass {
				// A checker that passed while a negative control went
				// uncaught is blind (Check.Verdict): the suite fails that
				// spec, and under fail-fast the specs after it never ran.
				v = ch.Verdict()
			}
			switch v {
			case report.StatusPass, report.StatusNotRun, report.StatusFail:
			default:
				return fmt.Sprintf("a check went undecided (%s): %s: %s", v, ch.Scenario, oneLine(ch.Message, 200))
			}
		}
	}
	return ""
}

// Units is how many specs (or Ordered groups) Cover mapped, and their
// baseline seconds in total.
func (r *GoRunner) Units() (int, float64) {
	t := 0.0
	for _, u := range r.units {
		t += u.secs
	}
	return len(r.units), t
}

func joinRowIDs(rows []report.RowID) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

// ErrNotServed is an embedded-Lua mutant whose run never served the
// mutated script: whatever the run found, it judged the original script,
// so it is neither a kill nor a survivor.
var ErrNotServed = errors.New("the mutated script was never served")

// checkServed reads the schemata build's served log (script.EnvServed)
// after a stage of g: every script made while g was active is there by
// the sha1 EVALSHA runs it by. g's mutated script must be among them and
// its original never: either way the run judged the original script.
// (The package's other scripts pass through too, by their own shas.)
func checkServed(log string, g gomut.Mutant) error {
	b, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("served log: %w", err)
	}
	ok := false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		switch {
		case f[0] != g.ID:
			return fmt.Errorf("%w: the build ran with mutant %s active, want %s", ErrNotServed, f[0], g.ID)
		case f[1] == g.Original:
			return fmt.Errorf("%w: a process made the original script (sha %s) with %s active, not its mutant (sha %s): the override did not apply", ErrNotServed, g.Original, g.ID, g.Served)
		case f[1] == g.Served:
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("%w: no spec's process made %s's script (sha %s): the run ran the original script", ErrNotServed, g.ID, g.Served)
	}
	return nil
}
