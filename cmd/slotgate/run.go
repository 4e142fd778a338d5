package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
)

const runHelp = `Usage: slotgate run [flags]

Runs the suites of the selected rows against real servers started on this
machine (local processes, or Docker containers with --provider containers;
behind in-process toxiproxy proxies either way), prints a scorecard, and
writes results.json, junit.xml, summary.md and report.html into --out.
Exits 0 when every selected row passes in both columns, 1 when the gate
fails, 2 on bad input. Ctrl-C, SIGTERM or SIGHUP stop the run cleanly: every
server is torn down, the report says INTERRUPTED, and the exit is 130. The
run locks --out; a second run on the same directory exits 2 naming the first.
MARCONI_* variables in the environment (spec 002 §8 flags, as a deployment
sets them) are checked first with the reference mesh's rules: a combination
the spec forbids exits 2 naming the rule. They do not change what the rows
test: each Marconi scenario sets its own flags (marconi-stage-flags walks
every stage).

Each suite package runs in its own Ginkgo process, up to --jobs at a time.
The suites that judge time against a bound share less: marconi-loss-budget
(Offer p99 within 1 ms) runs alone (the rest of its package as an untimed
job), and so does preflight (its busy node needs a whole core); failure drills, registry and Marconi (bounds of
300 ms to seconds) each run beside at most one untimed suite, never beside
each other. --shard i/n runs a deterministic 1/n of the suites, for
a CI matrix; slotgate report --merge joins the shards' results.

--provider external runs against endpoints slotgate did not start (a staging
cluster, compose/): --endpoint host:port of the cluster, and optionally
--standalone host:port and --postgres DSN, with --user/--password/--tls/
--cacert/--cert/--key as slotgate preflight takes them (same SLOTGATE_*
variables). It requires --allow-flush: every scenario starts by flushing the
target. Rows that need control of the topology (kills, failovers, slot
migration, proxies) or an endpoint that was not given are not run, and the
report says why; --topology, --server and --ports do not apply. Without
--row, only the rows the target can run are requested; a row named with
--row that cannot run fails the gate.

Flags:
`

type runFlags struct {
	rows       string
	profile    string
	seed       int64
	server     string
	topology   string
	timing     string
	backends   string
	out        string
	timeout    time.Duration
	requireAll bool
	quiet      bool
	ports      string
	provider   string
	external   externalFlags // --provider external (external.go)
	haltBudget string        // --halt-budget: runenv.ParseHaltBudget
	jobs       int           // --jobs: suites at a time (schedule.go)
	jobsSet    bool          // --jobs was given (0 then is an error, not the default)
	shard      string        // --shard i/n (shard.go)
	scripts    string        // --scripts DIR: a fencing script set (fencing.LoadScripts)
	clients    string        // --client name@version,...: the client releases the suites link (clients.go)
}

func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.rows, "row", "", "comma `list` of rows to run (default: every implemented row; slotgate rows lists them)")
	fs.StringVar(&f.profile, "profile", "full", "smoke (quick, what make test runs) or full (sign-off sizes)")
	fs.Int64Var(&f.seed, "seed", 0, "seed for every scenario's RNG; a failing run prints its seed, pass it here to replay (default: random)")
	fs.StringVar(&f.server, "server", "valkey-server", "server binary: valkey-server 8, or redis-server >= 7")
	fs.StringVar(&f.timing, "timing", "scaled", "failover timing of the servers slotgate starts: scaled (cluster-node-timeout 2 s, Sentinel down-after 1 s: failovers in seconds, time-scaled lease protocols keep production's ratios) or production (the servers' own defaults: cluster-node-timeout 15 s, Sentinel down-after 30 s; failovers take tens of seconds and the halt budget and lease TTL are judged at them)")
	fs.StringVar(&f.topology, "topology", "cluster:3x1", "comma list: the multi-shard topology of the cluster rows, cluster:NxR (N primaries, R replicas each), and/or the primary + replicas behind 3 Sentinels of the disabled-mode failover scenarios, replicated:R (default replicated:1, as production)")
	fs.StringVar(&f.backends, "backend", "go-redis,valkey-go", "client backends to test, comma list")
	fs.StringVar(&f.out, "out", "slotgate-report", "directory for results.json, junit.xml, summary.md, report.html")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long, a guard against a hung run (default 30m smoke, 60m full)")
	fs.BoolVar(&f.requireAll, "require-all", false, "fail the gate when any catalogue cell is not run in full: not run, or partial (scenarios this topology cannot host) — a CI gate before entering cluster mode should set this")
	fs.BoolVar(&f.quiet, "quiet", false, "less progress output")
	fs.StringVar(&f.provider, "provider", string(fixtures.ProviderLocal), "where the servers run: local (processes), containers (Docker; images from $"+runenv.EnvValkeyImage+" and $"+runenv.EnvPostgresImage+", default "+fixtures.DefaultValkeyImage+" and "+fixtures.DefaultPostgresImage+"; scripts/images.sh builds local ones), or external (endpoints slotgate did not start: --endpoint, --allow-flush)")
	fs.StringVar(&f.haltBudget, "halt-budget", "", "dispatch-halt `budget` of the failure drills: a duration for every client role (e.g. 5s), or pool=,subscription=,replica-reads= pairs (default "+runenv.DefaultHaltBudget.String()+", one fencing renew cadence; env "+runenv.EnvHaltBudget+")")
	fs.StringVar(&f.ports, "ports", "", "confine every port the servers and proxies bind to LO-HI, e.g. 20000-20999 (default: allocate free ports)")
	fs.IntVar(&f.jobs, "jobs", 0, "run up to `N` suite packages at a time; a suite that judges time against a bound shares less: marconi-loss-budget and preflight run alone, failure drills, registry and Marconi each beside at most one untimed suite (default: one per core)")
	fs.StringVar(&f.shard, "shard", "", "run shard `i/n` of the selected rows' suites (a deterministic split balanced by recorded wall time); merge the shards with slotgate report --merge")
	fs.StringVar(&f.scripts, "scripts", "", "run the fencing rows against the fencing script set in `DIR` (a manifest.json mapping each .lua file to its operation and phase; README, Bring your own scripts) instead of impl's embedded scripts; the locality row validates it too")
	fs.StringVar(&f.clients, "client", "", "comma `list` of name@version: build the suites against these client releases (go-redis@v9.20.0,valkey-go@v1.0.75) in a copy of the module under bin/clients, never the working tree; every label names the version linked. A version the module proxy cannot serve, or that impl does not compile against, exits 2 (default: go.mod's)")
	f.external.register(fs)
	fs.Usage = func() { fmt.Fprint(stderr, runHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, errHelp
		}
		return 0, fmt.Errorf("%w: %v (see slotgate run --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q (see slotgate run --help)", errUsage, fs.Arg(0))
	}
	fs.Visit(func(fl *flag.Flag) { f.jobsSet = f.jobsSet || fl.Name == "jobs" })
	plan, err := validate(f)
	if err != nil {
		return 0, err
	}
	return execute(plan, stdout, stderr)
}

// plan is a validated run.
type plan struct {
	runFlags
	rows     []report.RowID
	profile  runenv.Profile
	provider fixtures.Provider
	server   string // resolved path
	version  string
	root     string // module root
	packages []string

	// run are the rows whose suites run: rows minus those an external
	// target cannot run, which notRun explains (external.go).
	run     []report.RowID
	notRun  map[report.RowID]string
	servers []string // the external target's servers, as probed

	// shardOf is set for --shard: this shard's place, and requested the
	// whole run's rows (rows, run and packages are this shard's).
	shardOf   *shardSpec
	requested []report.RowID

	scriptSet *fencing.ScriptSet // --scripts, loaded
	pins      []clientPin        // --client, parsed
	// replicated is the replicated topology of --topology (default
	// "replicated"); topology keeps the cluster's after validate.
	replicated string
}

// parseTopologies splits --topology into the cluster rows' multi-shard
// topology and the replicated one (each at most once, each defaulted).
func parseTopologies(list string) (cluster, replicated string, err error) {
	cluster, replicated = "cluster:3x1", "replicated"
	seen := map[fixtures.Kind]bool{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		spec, err := fixtures.ParseSpec(item)
		if err != nil {
			return "", "", fmt.Errorf("%w: --topology: %v", errUsage, err)
		}
		switch spec.Kind {
		case fixtures.KindCluster:
			cluster = item
		case fixtures.KindReplicated:
			replicated = item
		default:
			return "", "", fmt.Errorf("%w: --topology takes a multi-shard cluster (cluster:NxR) and/or a replicated primary (replicated:R), got %q; rows that need a standalone or single-shard node start their own", errUsage, item)
		}
		if seen[spec.Kind] {
			return "", "", fmt.Errorf("%w: --topology names two %s topologies in %q: give each kind once", errUsage, spec.Kind, list)
		}
		seen[spec.Kind] = true
	}
	return cluster, replicated, nil
}

// validateMarconiEnv refuses MARCONI_* flags that spec 002 §8 forbids
// together (marconi.FlagRules), before any server starts: a deployment's
// flag set checked the way the mesh would refuse it at start. The suites
// set their own flags per scenario; the environment does not reach them.
func validateMarconiEnv(getenv func(string) string, environ []string) error {
	if !marconi.HasEnv(environ) {
		return nil
	}
	if err := marconi.FlagsFromEnv(getenv, environ).Validate(); err != nil {
		return fmt.Errorf("%w: MARCONI_* environment: %v", errUsage, err)
	}
	return nil
}

// validate turns flags into a plan or a usage error naming what to fix.
func validate(f runFlags) (plan, error) {
	p := plan{runFlags: f}
	var err error
	if p.rows, err = parseRows(f.rows); err != nil {
		return p, err
	}
	if p.profile, err = runenv.ParseProfile(f.profile); err != nil {
		return p, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := validateMarconiEnv(os.Getenv, os.Environ()); err != nil {
		return p, err
	}
	if f.haltBudget == "" {
		f.haltBudget = os.Getenv(runenv.EnvHaltBudget)
	}
	if _, err = runenv.ParseHaltBudget(f.haltBudget); err != nil {
		return p, fmt.Errorf("%w: %v", errUsage, err)
	}
	p.haltBudget = f.haltBudget
	if _, err = runenv.ParseBackends(f.backends); err != nil {
		return p, fmt.Errorf("%w: %v", errUsage, err)
	}
	if p.topology, p.replicated, err = parseTopologies(f.topology); err != nil {
		return p, err
	}
	if _, err := runenv.ParseTiming(f.timing); err != nil {
		return p, fmt.Errorf("%w: --timing: %v", errUsage, err)
	}
	if p.provider, err = fixtures.ParseProvider(f.provider); err != nil {
		return p, fmt.Errorf("%w: --provider %q: want local or containers, or external with --endpoint", errUsage, f.provider)
	}
	p.run = p.rows
	external := p.provider == fixtures.ProviderExternal
	var images []string // the container provider's, checked once the rows are known
	if external {
		target, servers, err := validateExternal(&p.external)
		if err != nil {
			return p, err
		}
		p.server, p.version, p.servers = f.server, "external", servers
		p.rows, p.run, p.notRun = splitExternalRows(p.rows, strings.TrimSpace(f.rows) != "", target)
	} else if p.provider == fixtures.ProviderContainers {
		p.server = f.server
		images = append(images, envOr(runenv.EnvValkeyImage, fixtures.DefaultValkeyImage))
		p.version = "image " + images[0]
	} else if p.server, p.version, err = serverBinary(f.server); err != nil {
		return p, err
	}
	if f.jobs < 0 || (f.jobsSet && f.jobs == 0) {
		return p, fmt.Errorf("%w: --jobs %d: want at least 1 (omit it for one per core)", errUsage, f.jobs)
	}
	if p.jobs == 0 {
		p.jobs = defaultJobs()
		if f.ports != "" {
			p.jobs = 1 // concurrent suites would compete for a confined range
		}
	}
	if external {
		// One target shared by every suite, each scenario starting with a
		// FLUSHALL: two suites side by side would flush each other's data
		// (protocol read nils when a Marconi suite ran beside it).
		p.jobs = 1
	}
	if f.ports != "" && !external {
		spec, _ := fixtures.ParseSpec(p.topology) // parsed by parseTopologies
		repl, _ := fixtures.ParseSpec(p.replicated)
		// A suite may start the cluster and the replicated topology (its
		// nodes and Sentinels) side by side.
		if err := checkPorts(f.ports, p.jobs*(spec.Nodes()+repl.Nodes()+fixtures.SentinelCount+2)); err != nil {
			return p, err
		}
	}
	for _, id := range p.run {
		row, _ := report.Lookup(id)
		for _, need := range row.Needs {
			if external {
				break // the target's --postgres, checked by validateExternal
			}
			if need == "postgres" && p.provider == fixtures.ProviderContainers {
				images = appendUnique(images, envOr(runenv.EnvPostgresImage, fixtures.DefaultPostgresImage))
			} else if need == "postgres" {
				if _, err := fixtures.PostgresBinDir(); err != nil {
					return p, fmt.Errorf("%w: row %s needs PostgreSQL: %v", errUsage, id, err)
				}
			}
		}
		if pkg, ok := suiteOf[id]; ok {
			p.packages = appendUnique(p.packages, pkg)
		}
	}
	if len(images) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a pull may be slow
		err := fixtures.CheckContainerEngine(ctx, images...)
		cancel()
		if err != nil {
			return p, fmt.Errorf("%w: --provider containers: %v", errUsage, err)
		}
	}
	if f.shard != "" {
		if err := p.applyShard(); err != nil {
			return p, err
		}
	}
	if p.root, err = moduleRoot(); err != nil {
		return p, err
	}
	if f.scripts != "" {
		if p.scripts, err = filepath.Abs(f.scripts); err != nil {
			return p, fmt.Errorf("%w: --scripts %s: %v", errUsage, f.scripts, err)
		}
		set, err := fencing.LoadScripts(p.scripts)
		if err != nil {
			return p, fmt.Errorf("%w: --scripts: %v", errUsage, err)
		}
		p.scriptSet = set
	}
	if f.clients != "" {
		if p.pins, err = parseClients(f.clients, false); err != nil {
			return p, err
		}
	}
	if f.timeout < 0 {
		return p, fmt.Errorf("%w: --timeout %v: want a positive duration (omit it for 30m smoke, 60m full)", errUsage, f.timeout)
	}
	if p.timeout == 0 {
		// A guard against a hung run, not a speed bar: twice what a
		// loaded 2-core runner has taken.
		p.timeout = 60 * time.Minute
		if p.profile == runenv.ProfileSmoke {
			p.timeout = 30 * time.Minute
		}
		if f.timing == string(runenv.TimingProduction) {
			p.timeout *= 4 // failovers of tens of seconds, each primary's spaced by its quarantine
		}
	}
	return p, nil
}

// serverBinary resolves the server and checks it is Valkey or Redis >= 7.
func serverBinary(name string) (path, version string, err error) {
	path, version, err = fixtures.ResolveServer(context.Background(), name)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v (or pass --server PATH)", errUsage, err)
	}
	return path, version, nil
}

// checkPorts refuses a --ports range that cannot hold the run: every node
// binds three ports (server, cluster bus, proxy).
func checkPorts(spec string, nodes int) error {
	lo, hi, err := runenv.ParsePorts(spec)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	need, free := 3*nodes, 0
	var taken []string
	for port := lo; port <= hi; port++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			taken = append(taken, strconv.Itoa(port))
			continue
		}
		l.Close()
		free++
	}
	if free < need {
		return fmt.Errorf("%w: port clash: only %d of the ports in %s are free (in use: %s) and this run binds %d; choose another range or omit --ports", errUsage, free, spec, strings.Join(first(taken, 8), ","), need)
	}
	return nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// moduleRoot finds the slotgate source tree the suites are compiled from.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/slotgate/slotgate\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: run slotgate from inside its source tree (no slotgate go.mod above %s): the suites are compiled from source", errUsage, dir)
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// ginkgoCommand runs a ginkgo binary directly, so that slotgate is its
// parent and its parent-death signal works: one next to slotgate (make build
// puts one there), else the one `go tool` builds at the version go.mod pins
// (`go tool -n` prints its path), else `go tool ginkgo` itself.
func ginkgoCommand(root string, args ...string) *exec.Cmd {
	if self, err := os.Executable(); err == nil {
		if g := filepath.Join(filepath.Dir(self), "ginkgo"); fileExists(g) {
			return exec.Command(g, args...)
		}
	}
	resolve := exec.Command("go", "tool", "-n", "ginkgo")
	resolve.Dir = root
	if out, err := resolve.Output(); err == nil {
		if g := strings.TrimSpace(string(out)); fileExists(g) {
			return exec.Command(g, args...)
		}
	}
	return exec.Command("go", append([]string{"tool", "ginkgo"}, args...)...)
}

// startOwned starts cmd so that it dies with slotgate: SIGKILL as its
// parent-death signal. That signal fires when the *thread* that forked the
// child exits, not the process (golang/go#27505), so the child is forked
// from a goroutine locked to its thread, which then waits for the child and
// only lets its thread go once the child is reaped. The returned channel
// receives cmd.Wait's result.
func startOwned(cmd *exec.Cmd) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	return done, <-started
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func execute(p plan, stdout, stderr io.Writer) (int, error) {
	out, lock, err := openOut(p.out)
	if err != nil {
		return 0, err
	}
	defer lock.release()
	if p.seed == 0 {
		p.seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	started := time.Now()
	fmt.Fprintf(stdout, "slotgate: profile %s · seed %d · server %s · rows %s\n", p.profile, p.seed, p.version, joinRows(p.run))
	for _, id := range p.rows {
		if reason := p.notRun[id]; reason != "" {
			fmt.Fprintf(stdout, "slotgate: %s not run on this target: %s\n", id, reason)
		}
	}
	for _, s := range p.servers {
		fmt.Fprintf(stdout, "slotgate: target %s\n", s)
	}
	if s := p.scriptSet; s != nil {
		fmt.Fprintf(stdout, "slotgate: fencing scripts %q from %s (%d files)\n", s.Name, s.Dir, len(s.Files()))
		if len(s.Fallback) > 0 {
			fmt.Fprintf(stdout, "slotgate: the manifest leaves out %s: the embedded scripts stand in there\n", strings.Join(s.Fallback, ", "))
		}
	}
	removeReports(out)

	// One ginkgo per suite package, each with its own JSON report, up to
	// --jobs at a time (schedule.go).
	jobs := planJobs(p.packages, p.run, p.profile == runenv.ProfileFull)
	env := append(os.Environ(),
		runenv.EnvProfile+"="+string(p.profile),
		runenv.EnvSeed+"="+strconv.FormatInt(p.seed, 10),
		runenv.EnvServer+"="+p.server,
		runenv.EnvBackends+"="+p.backends,
		runenv.EnvTopology+"="+p.topology,
		runenv.EnvReplicated+"="+p.replicated,
		runenv.EnvTiming+"="+p.timing,
		runenv.EnvPorts+"="+p.ports,
		runenv.EnvProvider+"="+string(p.provider),
		runenv.EnvHaltBudget+"="+p.haltBudget,
		runenv.EnvOut+"="+out,
		runenv.EnvScripts+"="+p.scripts,
		// The suite processes watch slotgate and tear down if it is
		// SIGKILLed (fixtures/owner.go); ginkgo itself dies with it.
		fixtures.EnvOwner+"="+fixtures.OwnerStamp(),
	)
	if p.provider == fixtures.ProviderExternal {
		env = append(env, externalEnv(p.external.target())...)
	}
	// Every suite binary first, in one go command (build.go): no suite's
	// compile then sits on its wall time or beside a timed suite.
	// --client: the suites build and run in the module copy that links the
	// pinned releases (clients.go); labels come from that copy's go.mod.
	suiteRoot := p.root
	if len(p.pins) > 0 {
		if suiteRoot, err = prepareClientModule(p.root, p.pins, env, stdout); err != nil {
			return 0, err
		}
	}
	ldflags := clientLinkFlags(suiteRoot, env)
	bins, err := buildSuites(suiteRoot, p.packages, env, ldflags, len(p.pins) > 0, stdout, stderr)
	if err != nil {
		return 0, err
	}
	defer bins.remove()
	con := &console{stdout: stdout, stderr: stderr}
	if len(jobs) > 1 {
		fmt.Fprintf(stdout, "slotgate: %d suites, up to %d at a time; %s\n", len(jobs), min(p.jobs, len(jobs)), exclusiveLine(jobs))
	}
	sched := &scheduler{jobs: p.jobs, timeout: p.timeout, started: started, con: con, ticker: 30 * time.Second,
		start: func(j *suiteJob, left time.Duration) (<-chan error, error) {
			args := []string{"run", "--label-filter", labelFilter(j.rows), "--json-report", j.jsonName(), "--output-dir", out,
				"--timeout", left.Round(time.Second).String(), "--poll-progress-after", "120s", "--keep-going"}
			if !p.quiet {
				args = append(args, "-v")
			}
			if bin := bins.path(j.pkg); bin == j.pkg { // Ginkgo compiles it: record the versions there too
				args = append(args, "--ldflags", ldflags, bin)
			} else {
				args = append(args, bin)
			}
			cmd := ginkgoCommand(suiteRoot, args...)
			cmd.Dir, cmd.Env = suiteRoot, env
			cmd.Stdout, cmd.Stderr = stream{con, j, 0}, stream{con, j, 1}
			// A server that inherited the output pipe must not hold the
			// run once its suite is gone.
			cmd.WaitDelay = time.Minute
			// Own process group: a Ctrl-C reaches slotgate, which forwards
			// exactly one interrupt so Ginkgo runs its cleanup (a second
			// would skip it). A hang-up (the terminal or SSH session went
			// away) is an interrupt too. A SIGKILLed slotgate takes ginkgo
			// with it (startOwned), and the suite processes notice and tear
			// down (fixtures.EnvOwner).
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			j.cmd = cmd
			return startOwned(cmd)
		}}
	sig, stop := notifySignals()
	defer stop()
	interrupted, err := sched.run(jobs, sig) // the signal that stopped the run
	if err != nil {
		return 0, err
	}

	reports, missing, err := loadReports(out, jobs)
	if err != nil {
		return 0, err
	}
	for _, j := range missing {
		fmt.Fprintf(stderr, "slotgate: suite %s wrote no results (%s missing); scoring its rows as not run\n", j.pkg, j.jsonName())
	}
	meta := report.Meta{
		StartedAt: started, Duration: report.Duration(time.Since(started)), Profile: string(p.profile), Seed: p.seed,
		Rows: p.rows, Provider: string(p.provider), Version: version, GoVersion: runtime.Version(), CommandLine: strings.Join(os.Args, " "),
		Servers: serversOf(p), NotRun: p.notRun, Host: fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
	}
	if interrupted != "" {
		meta.Interrupted = &report.Interruption{Cause: interrupted}
	} else if slices.ContainsFunc(jobs, func(j *suiteJob) bool { return j.started.IsZero() }) {
		meta.Interrupted = &report.Interruption{Cause: fmt.Sprintf("--timeout %v", p.timeout)}
	}
	if len(jobs) > 0 {
		meta.Schedule = scheduleMeta(p.jobs, started, jobs)
	}
	if p.shardOf != nil {
		meta.Shard = &report.Shard{Index: p.shardOf.index, Of: p.shardOf.of, Requested: p.requested}
	}
	card, err := report.FromGinkgo(reports, meta)
	if err != nil {
		return 0, fmt.Errorf("score results: %w", err)
	}
	paths, err := report.WriteAll(out, card)
	if err != nil {
		return 0, fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintln(stdout)
	report.WriteTerminal(stdout, card, isTerminal(stdout))
	fmt.Fprintf(stdout, "report: %s\n", paths.HTML)
	// The plain closing line CI runners read: cells passed vs failed or blind.
	t := card.Tally()
	fmt.Fprintf(stdout, "scorecard: %d passed, %d partial, %d failed, %d skipped\n", t.Pass, t.Partial, t.Fail+t.Blind+t.Inconclusive, t.NotRun)
	if left, err := fixtures.LeftoversOf(fixtures.OwnerStamp()); err == nil && len(left) > 0 {
		fmt.Fprintf(stderr, "slotgate: LEAK: %d resources outlived the run:\n  %s\n", len(left), strings.Join(left, "\n  "))
		return exitGateFail, nil
	}
	if interrupted != "" {
		return exitSignal, nil
	}
	pass, _ := card.Gate()
	if p.requireAll {
		if complete, reasons := card.Complete(); !complete {
			// The gate above judged what ran; --require-all also wants
			// every cell run in full. Say which were not.
			fmt.Fprintf(stdout, "--require-all: %d cells not run in full:\n  %s\n", len(reasons), strings.Join(reasons, "\n  "))
			pass = false
		}
	}
	if !pass {
		return exitGateFail, nil
	}
	return exitPass, nil
}

// awaitGroup waits until every process of the suites' process group is gone,
// so slotgate never exits while a suite is still tearing its servers down
// (Ginkgo may return before an interrupted suite process finished its
// cleanup). A group still alive after a minute is killed: its servers then
// die of their parent-death signal, and `fixtures.Leftovers` below reports
// any directory left behind.
func awaitGroup(pgid int, stderr io.Writer) {
	deadline := time.Now().Add(time.Minute)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "slotgate: suite processes still running a minute after the suites ended; killing them\n")
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// groupAlive reports a live (non-zombie) process in process group pgid.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces, so split after ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// serversOf names the servers of the run for the report: the external
// target's as probed, else the binary or image that was started.
func serversOf(p plan) []string {
	if len(p.servers) > 0 {
		return p.servers
	}
	return []string{p.version}
}

// signalName names a signal as a reader knows it ("SIGHUP").
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

func labelFilter(rows []report.RowID) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = string(r)
	}
	return strings.Join(parts, " || ")
}

func joinRows(rows []report.RowID) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
