package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/mutate"
	"github.com/slotgate/slotgate/mutate/gomut"
	"github.com/slotgate/slotgate/mutate/luamut"
	"github.com/slotgate/slotgate/mutate/schema"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
)

const mutateHelp = `Usage: slotgate mutate [flags]

Measures the harness's own detection power (spec 000 §Mechanized
verification, applied to slotgate itself): it generates mutants of the
implementation under test, runs the rows that cover each mutant on real
servers, and reports every mutant as killed (by which row, column and
check), survived, or equivalent (with the reason). A gate is worth exactly
the bugs it catches.

Lua mutants (--kind lua) are made from the fencing script set — impl's
embedded scripts, or --scripts DIR (a manifest.json and the .lua files it
names; README, "Bring your own scripts") — parsed by gopher-lua, each
re-parsed to be sure it compiles: relational swaps, +1 → +0/+2, removed
if … return … end guards, swapped KEYS indexes, a key from ARGV or built by
concatenation, TTL changes, a dropped redis.call. Each mutant is judged by
the locality validator (in-process) and then by the rows that run its
script: fencing-scripts (C scripts) and fencing-migration (every phase and
the merges); --profile full adds protocol and locality's runtime twin. The
suites are compiled once and reload the mutated set per mutant
(SLOTGATE_SCRIPTS); one client backend (go-redis) runs them, since a script
behaves the same under either. In the smoke profile a mutant stops at its
first killer; in full every covering row runs it (per-row kill rates).

Go mutants (--kind go) come from mutate/gomut: go/ast edits of impl's guard
and filter code (gomut.DefaultTargets), each type-checked. Every spec of
the covering rows first runs once, alone, with the unmutated code and Go
coverage of the target packages (the Go baseline and a coverage map); a
mutant then runs only the specs whose baseline reached the mutated code. A
mutant no spec reaches survives as "not covered". With --schemata (the
default) every mutant of the targets is compiled into one build of each
suite, its site switched by SLOTGATE_MUTANT=<id> (mutate/schema), and the
baseline runs that build with no mutant active: if a spec fails there and
passes with the original code, the schemata changed behaviour and the run
stops (exit 2). A mutant with no schema, or every mutant with
--schemata=false, is compiled on its own in a copy of the module. The
baseline specs and then the mutants run --jobs at a time (default 2), each
in its own suite process with its own topology, the mutants whose reaching
specs took longest in the baseline first; a mutant's verdict does not
depend on what runs beside it.

Marconi Lua mutants (--kind marconi-lua) are the same luamut mutants of
the scripts embedded in Go packages rather than a script set:
impl/marconi/lua (register, heartbeat, release, master: the SessionStore)
and impl/marconi/audit/lua/append.lua (the stream writer)
(gomut.DefaultLuaTargets). They ride the Go mutant schemata: the module
copy gets a generated file per package holding every mutated script keyed
by id, and each client.NewScript source is wrapped so SLOTGATE_MUTANT=<id>
serves the mutated script instead. The locality validator judges each one
first; then the specs whose baseline reached the Go call that runs the
script (client.RunScript in LuaTarget.Runs) run it. A run that made the
original script, or never the mutant's (by sha1, logged by the build),
is an error, never a verdict.

Before any mutant, the unmutated set runs through every stage: a row that
fails its own baseline would make every kill meaningless, so the run stops.

Writes mutation.json and mutation.html (kill rate per row and per
package/script, every survivor with its diff and the rows that ran it,
equivalents with their reason) into --out. Exits 0 when the kill rate of
non-equivalent mutants is at least --min-kill, 1 when it is lower (or the
baseline fails), 2 on bad input (unknown row, bad --scripts directory or
manifest, missing server binary).

Flags:
`

type mutateFlags struct {
	rows, profile, scripts, out, kinds, server string
	max                                        int
	seed                                       int64
	minKill                                    float64
	timeout                                    time.Duration
	every                                      bool
	list                                       bool
	ids                                        string
	schemata                                   bool
	jobs                                       int
}

// luaRows are the rows that can judge a Lua mutant.
var luaRows = []report.RowID{report.RowFencingScripts, report.RowFencingMigration, report.RowProtocol, report.RowLocality}

func cmdMutate(args []string, stdout, stderr io.Writer) (int, error) {
	var f mutateFlags
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.rows, "row", "", "comma `list` of rows that run mutants (default: every row that covers a mutant of the selected kinds)")
	fs.StringVar(&f.profile, "profile", "smoke", "smoke (each mutant stops at its first killer) or full (every covering row runs every mutant; adds protocol and locality's runtime twin for Lua)")
	fs.StringVar(&f.scripts, "scripts", "", "mutate the fencing script set in `DIR` (manifest.json + .lua files) instead of impl's embedded scripts")
	fs.StringVar(&f.out, "out", "slotgate-mutation", "directory for mutation.json, mutation.html, the suites' log and binaries")
	fs.StringVar(&f.kinds, "kind", "lua", "mutant kinds, comma list of lua (the fencing script set), go, marconi-lua (Marconi's embedded session and audit scripts)")
	fs.IntVar(&f.max, "max", 0, "run at most `N` mutants, sampled deterministically by --seed (default: 40 in smoke, all in full)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the sample and of every suite run")
	fs.Float64Var(&f.minKill, "min-kill", 0.9, "exit 0 only when killed / (killed + survived) is at least this")
	fs.StringVar(&f.server, "server", "valkey-server", "server binary")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Minute, "give up on one suite run of one mutant after this long")
	fs.BoolVar(&f.every, "every-row", false, "run every covering row on every mutant, also in smoke")
	fs.StringVar(&f.ids, "id", "", "run only the mutants with these comma-separated `ids` (from --list or mutation.json; e.g. to re-run survivors after strengthening a row)")
	fs.BoolVar(&f.schemata, "schemata", true, "Go mutants: compile every mutant of the targets into one build of each suite (mutant schemata, switched by SLOTGATE_MUTANT); false builds each mutant on its own")
	fs.IntVar(&f.jobs, "jobs", 2, "Go and marconi-lua mutants: run up to `N` suite processes at once (baseline specs, mutants); each has its own topology")
	fs.BoolVar(&f.list, "list", false, "list the mutants (id, operator, what changed) and exit without running them")
	fs.Usage = func() { fmt.Fprint(stderr, mutateHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, errHelp
		}
		return 0, fmt.Errorf("%w: %v (see slotgate mutate --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q (see slotgate mutate --help)", errUsage, fs.Arg(0))
	}
	profile, err := runenv.ParseProfile(f.profile)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	full := profile == runenv.ProfileFull
	if f.max == 0 && !full {
		f.max = 40
	}
	if f.max < 0 || f.minKill < 0 || f.minKill > 1 || f.jobs < 1 {
		return 0, fmt.Errorf("%w: --max must be ≥ 0, --jobs ≥ 1 and --min-kill within [0, 1]", errUsage)
	}
	var kinds []mutate.Kind
	for _, k := range strings.Split(f.kinds, ",") {
		switch kk := mutate.Kind(strings.TrimSpace(k)); kk {
		case mutate.KindLua, mutate.KindGo, mutate.KindMarconiLua:
			kinds = append(kinds, kk)
		default:
			return 0, fmt.Errorf("%w: --kind %q: want a comma list of lua, go, marconi-lua", errUsage, k)
		}
	}
	rows, err := parseRows(f.rows)
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(f.rows) != "" {
		for _, r := range rows {
			if !implemented(r) {
				return 0, fmt.Errorf("%w: row %s is not implemented in this build", errUsage, r)
			}
		}
		if slices.Contains(kinds, mutate.KindLua) && !slices.ContainsFunc(rows, func(r report.RowID) bool { return slices.Contains(luaRows, r) }) {
			return 0, fmt.Errorf("%w: no row of --row %s runs the fencing scripts (Lua mutants need one of %s)", errUsage, f.rows, joinRows(luaRows))
		}
	}
	set := fencing.Embedded()
	if f.scripts != "" {
		if set, err = fencing.LoadScripts(f.scripts); err != nil {
			return 0, fmt.Errorf("%w: --scripts: %v", errUsage, err)
		}
	}
	serverPath, serverVersion, err := serverBinary(f.server)
	if err != nil && !f.list {
		return 0, err
	}
	root, err := moduleRoot()
	if err != nil {
		return 0, err
	}

	// Generate.
	var mutants []mutate.Mutant
	generated := 0
	if slices.Contains(kinds, mutate.KindLua) {
		ms, err := mutate.LuaMutants(set, rows, full)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errUsage, err)
		}
		generated += len(ms)
		mutants = append(mutants, ms...)
	}
	var goMutants []mutate.Mutant
	var schemata *gomut.Schemata
	if slices.Contains(kinds, mutate.KindGo) {
		gm, sch, err := generateGo(root, rows, f.seed, f.schemata && !f.list)
		if err != nil {
			return 0, fmt.Errorf("%w: --kind go: %v", errUsage, err)
		}
		generated += len(gm)
		goMutants, schemata = gm, sch
	}
	mutants = append(mutants, goMutants...)
	var mlSchemata *gomut.Schemata
	if slices.Contains(kinds, mutate.KindMarconiLua) {
		ml, sch, err := generateMarconiLua(root, rows)
		if err != nil {
			return 0, fmt.Errorf("%w: --kind marconi-lua: %v", errUsage, err)
		}
		generated += len(ml)
		mutants, mlSchemata = append(mutants, ml...), sch
	}
	if f.ids != "" {
		want := strings.Split(f.ids, ",")
		var picked []mutate.Mutant
		for _, id := range want {
			i := slices.IndexFunc(mutants, func(m mutate.Mutant) bool { return m.ID == strings.TrimSpace(id) })
			if i < 0 {
				return 0, fmt.Errorf("%w: --id %s: no such mutant (slotgate mutate --list shows them)", errUsage, id)
			}
			picked = append(picked, mutants[i])
		}
		mutants, f.max = picked, 0
	}
	mutants = luamut.Sample(mutants, f.max, f.seed)
	if f.list {
		for _, m := range mutants {
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", m.ID, m.Operator, m.Desc, joinRows(m.Rows))
		}
		fmt.Fprintf(stdout, "%d mutants (%d generated)\n", len(mutants), generated)
		return exitPass, nil
	}
	if len(mutants) == 0 {
		return 0, fmt.Errorf("%w: no mutant covered by the selected rows", errUsage)
	}

	out, lock, err := openOut(f.out)
	if err != nil {
		return 0, err
	}
	defer lock.release()
	started := time.Now()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sig, stopSig := notifySignals()
	defer stopSig()
	go func() {
		if _, ok := <-sig; ok {
			fmt.Fprintln(stderr, "slotgate: interrupted; stopping after the running suite tears down")
			stop()
		}
	}()
	logf, err := os.Create(filepath.Join(out, "suites.log"))
	if err != nil {
		return 0, fmt.Errorf("create log: %w", err)
	}
	defer logf.Close()
	work, err := os.MkdirTemp("", "slotgate-mutate-")
	if err != nil {
		return 0, fmt.Errorf("scratch dir: %w", err)
	}
	defer os.RemoveAll(work)

	var covered []report.RowID // the rows that run a sampled mutant (--row may name more)
	if slices.Contains(kinds, mutate.KindLua) {
		covered = append(covered, report.RowLocality) // its static validator judges every Lua mutant
	}
	for _, m := range mutants {
		for _, r := range m.Rows {
			if !slices.Contains(covered, r) {
				covered = append(covered, r)
			}
		}
	}
	meta := mutate.Meta{StartedAt: started, Profile: string(profile), Seed: f.seed, Rows: covered, Kinds: kinds, Jobs: f.jobs,
		Scripts: set.Name, Generated: generated, Max: f.max, MinKill: f.minKill, CommandLine: strings.Join(os.Args, " ")}
	if set.Dir != "" {
		meta.Scripts += " (" + set.Dir + ")"
	}
	if !slices.Contains(kinds, mutate.KindLua) {
		meta.Scripts = "" // no script set mutated
	}
	if slices.Contains(kinds, mutate.KindMarconiLua) {
		if meta.Scripts != "" {
			meta.Scripts += "; "
		}
		meta.Scripts += "Marconi's embedded scripts (" + luaTargetList() + ")"
	}
	if len(set.Fallback) > 0 {
		meta.Notes = append(meta.Notes, "the manifest leaves out "+strings.Join(set.Fallback, ", ")+": the embedded scripts stand in there and are mutated as part of the set")
	}
	fmt.Fprintf(stdout, "slotgate mutate: %d mutants (%d generated) · profile %s · seed %d · server %s · scripts %s\n", len(mutants), generated, profile, f.seed, serverVersion, meta.Scripts)

	var results []mutate.Result
	var luaList []mutate.Mutant
	for _, m := range mutants {
		if m.Kind == mutate.KindLua {
			luaList = append(luaList, m)
		}
	}
	if len(luaList) > 0 {
		// The rows the Lua mutants need, in stage order.
		var need []report.RowID
		var pkgs []string
		for _, m := range luaList {
			for _, r := range m.Rows {
				if !slices.Contains(need, r) {
					need = append(need, r)
				}
			}
		}
		slices.SortFunc(need, func(a, b report.RowID) int { return slices.Index(luaRows, a) - slices.Index(luaRows, b) })
		for _, r := range need {
			for _, st := range mutate.LuaStages(r) {
				pkgs = appendUnique(pkgs, st.Pkg)
			}
		}
		b := time.Now()
		fmt.Fprintf(stdout, "slotgate mutate: compiling %s once (the suites reload the script set per mutant)\n", strings.Join(pkgs, ", "))
		suites, err := mutate.BuildSuites(ctx, root, filepath.Join(work, "bin"), pkgs, logf)
		if err != nil {
			return 0, err
		}
		meta.BuildSeconds = time.Since(b).Seconds()
		table := commandTable("", serverPath, false, stderr)
		runner := &mutate.LuaRunner{Set: set, Suites: suites, Table: table, Work: work, Every: full || f.every, Timeout: f.timeout, Log: logf,
			Env: []string{
				runenv.EnvProfile + "=smoke",
				runenv.EnvSeed + "=" + strconv.FormatInt(f.seed, 10),
				runenv.EnvServer + "=" + serverPath,
				runenv.EnvBackends + "=go-redis",
				fixtures.EnvOwner + "=" + fixtures.OwnerStamp(),
			}}
		if full {
			runner.Env[0] = runenv.EnvProfile + "=full"
		}
		b = time.Now()
		if err := runner.Baseline(ctx, need, func(s string) { fmt.Fprintln(stdout, "slotgate mutate: "+s) }); err != nil {
			fmt.Fprintf(stderr, "slotgate mutate: %v\n", err)
			return exitGateFail, nil
		}
		meta.BaselineSeconds = time.Since(b).Seconds()
		for i, m := range luaList {
			if ctx.Err() != nil {
				break
			}
			r := runner.Run(ctx, m)
			results = append(results, r)
			progress(stdout, i+1, len(mutants), r)
		}
	}
	var goList, mlList []mutate.Mutant
	for _, m := range mutants {
		switch m.Kind {
		case mutate.KindGo:
			goList = append(goList, m)
		case mutate.KindMarconiLua:
			mlList = append(mlList, m)
		}
	}
	env := []string{
		runenv.EnvProfile + "=" + string(profile),
		runenv.EnvSeed + "=" + strconv.FormatInt(f.seed, 10),
		runenv.EnvServer + "=" + serverPath,
		runenv.EnvBackends + "=go-redis", // impl's guards do not depend on the client backend
		fixtures.EnvOwner + "=" + fixtures.OwnerStamp(),
	}
	done := len(luaList)
	for _, b := range []struct {
		name string
		list []mutate.Mutant
		sch  *gomut.Schemata
	}{{"go", goList, schemata}, {"marconi-lua", mlList, mlSchemata}} {
		if len(b.list) == 0 || ctx.Err() != nil {
			continue
		}
		var static func(mutate.Mutant) (mutate.Kill, bool)
		if b.name == "marconi-lua" {
			// The locality row's static validator judges every Lua
			// mutant, the embedded ones as the fencing set's.
			lr := &mutate.LuaRunner{Table: commandTable("", serverPath, false, stderr)}
			static = func(m mutate.Mutant) (mutate.Kill, bool) {
				orig, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
				if err != nil {
					return mutate.Kill{}, false
				}
				return lr.Static(m, string(orig))
			}
		}
		rs, code, err := runGoRunner(ctx, root, filepath.Join(work, b.name), f.timeout, f.seed, logf, env, b.list, b.sch, static, &meta, stdout, done, len(mutants), f.jobs)
		results = append(results, rs...)
		done += len(rs)
		if err != nil {
			if code != 0 {
				fmt.Fprintf(stderr, "slotgate mutate: %v\n", err)
				return code, nil
			}
			return 0, err
		}
	}

	meta.Seconds = time.Since(started).Seconds()
	rep := mutate.NewReport(meta, results)
	jsonPath, htmlPath, err := rep.Write(out)
	if err != nil {
		return 0, err
	}
	t := rep.Summary.Total
	fmt.Fprintf(stdout, "\nkill rate %.1f%% (%d killed, %d survived, %d equivalent, %d errors) — min %.0f%%: %s\n", 100*t.KillRate, t.Killed, t.Survived, t.Equivalent, t.Errors, 100*f.minKill, map[bool]string{true: "PASS", false: "FAIL"}[rep.Pass])
	for _, r := range results {
		if r.Status == mutate.Survived {
			fmt.Fprintf(stdout, "  survived %s: %s (ran by %s)\n", r.ID, r.Desc, joinRows(r.Ran))
		}
	}
	fmt.Fprintf(stdout, "total %s, %.1fs per mutant (build %.0fs, baseline %.0fs, Go mutants %.0fs wall with --jobs %d)\nreport: %s\n       %s\n", time.Since(started).Round(time.Second), perMutant(results), meta.BuildSeconds, meta.BaselineSeconds, meta.MutantsSeconds, f.jobs, htmlPath, jsonPath)
	if ctx.Err() != nil {
		return exitSignal, nil
	}
	if crashes := suiteCrashes(results); crashes > 0 {
		// A suite process a mutant's panic took down ran no cleanup: its
		// servers and directory are left for its parent to remove (their
		// owner is dead, so the sweep takes them; nothing of a live owner).
		if swept, err := fixtures.SweepStale(); len(swept) > 0 || err != nil {
			fmt.Fprintf(stderr, "slotgate: removed %d resources left by %d crashed suite processes (%v)\n", len(swept), crashes, err)
		}
	}
	if left, err := fixtures.LeftoversOf(fixtures.OwnerStamp()); err == nil && len(left) > 0 {
		fmt.Fprintf(stderr, "slotgate: LEAK: %d resources outlived the run:\n  %s\n", len(left), strings.Join(left, "\n  "))
	}
	if !rep.Pass {
		return exitGateFail, nil
	}
	return exitPass, nil
}

// runGoRunner runs list (Go mutants, or embedded-Lua mutants served by
// their schemata) through a mutate.GoRunner: one build with coverage, the
// baseline, then each mutant through the specs that reached it.
func runGoRunner(ctx context.Context, root, work string, timeout time.Duration, seed int64, logf io.Writer, env []string,
	list []mutate.Mutant, sch *gomut.Schemata, static func(mutate.Mutant) (mutate.Kill, bool), meta *mutate.Meta, stdout io.Writer, done, total, jobs int) ([]mutate.Result, int, error) {
	runner := &mutate.GoRunner{Root: root, Work: work, Timeout: timeout, Log: logf, Env: env, Schemata: sch, Order: seed, Static: static, Jobs: jobs}
	defer runner.Close()
	if sch != nil {
		in := 0
		for _, m := range list {
			if sch.In[m.ID] {
				in++
			} else if why, ok := sch.Fallback[m.ID]; ok {
				meta.Notes = append(meta.Notes, "built on its own (no schema): "+m.ID+": "+why)
			}
		}
		meta.Notes = append(meta.Notes, fmt.Sprintf("%s mutant schemata: %d of the %d sampled %s mutants (%d of every target's %d) switched by %s in one build of each suite, the rest built on their own",
			list[0].Kind, in, len(list), list[0].Kind, len(sch.In), len(sch.In)+len(sch.Fallback), schema.EnvMutant))
	}
	b := time.Now()
	code, err := coverGo(ctx, runner, list, func(s string) { fmt.Fprintln(stdout, "slotgate mutate: "+s) })
	if err != nil {
		return nil, code, err
	}
	meta.BuildSeconds += runner.BuildSeconds
	meta.BaselineSeconds += time.Since(b).Seconds() - runner.BuildSeconds
	// Up to jobs mutants at once, the costliest first; results keep list's
	// order, so the report does not depend on which finished first.
	results := make([]mutate.Result, len(list))
	ran := make([]bool, len(list))
	var mu sync.Mutex
	order := mutate.LongestFirst(len(list), func(i int) float64 { return runner.Cost(list[i], goMutantsByID[list[i].ID]) })
	b = time.Now()
	mutate.Pool(order, jobs, func() bool { return ctx.Err() != nil }, func(i int) {
		r := runner.Run(ctx, list[i], goMutantsByID[list[i].ID])
		mu.Lock()
		defer mu.Unlock()
		results[i], ran[i] = r, true
		done++
		progress(stdout, done, total, r)
	})
	meta.MutantsSeconds += time.Since(b).Seconds()
	var out []mutate.Result
	for i, r := range results {
		if ran[i] {
			out = append(out, r)
		}
	}
	return out, 0, nil
}

func perMutant(rs []mutate.Result) float64 {
	if len(rs) == 0 {
		return 0
	}
	t := 0.0
	for _, r := range rs {
		t += r.Seconds
	}
	return t / float64(len(rs))
}

func progress(w io.Writer, i, n int, r mutate.Result) {
	line := fmt.Sprintf("[%d/%d] %s %s: %s", i, n, r.ID, r.Operator, r.Desc)
	switch r.Status {
	case mutate.Killed:
		line += " — killed by " + r.Killer.String()
	case mutate.Survived:
		line += " — SURVIVED (ran by " + joinRows(r.Ran) + ")"
		if r.Reason != "" {
			line += "; " + r.Reason
		}
	default:
		line += " — " + string(r.Status) + ": " + r.Reason
	}
	if r.Kind == mutate.KindGo && r.Specs > 0 && r.Schema {
		fmt.Fprintf(w, "%s (%.1fs: schemata, %d specs)\n", line, r.Seconds, r.Specs)
		return
	}
	if r.Kind == mutate.KindGo && r.Specs > 0 {
		fmt.Fprintf(w, "%s (%.1fs: build %.1fs, %d specs)\n", line, r.Seconds, r.BuildSeconds, r.Specs)
		return
	}
	fmt.Fprintf(w, "%s (%.1fs)\n", line, r.Seconds)
}

// suiteCrashes counts the suite runs a mutant's panic took down (each kill
// confirmed by a second run: two processes per such mutant).
func suiteCrashes(results []mutate.Result) int {
	n := 0
	for _, r := range results {
		for _, k := range r.Kills {
			if k.Crashed() {
				n += 2
			}
		}
	}
	return n
}
