package main

import (
	"bytes"
	"fmt"
	"github.com/slotgate/slotgate/recheck"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/report"
)

// timedSuites are the suite packages that judge time against a bound, with
// the bound. How tight it is decides what they may share the machine with:
// a memory-speed bound (~1 ms) runs alone, since any other suite's load could
// decide it; a bound of hundreds of milliseconds or more runs beside at most
// one untimed suite and never beside another timed one, so on a 2-core
// machine it keeps a core to itself. Every other suite counts events (lost
// writes, duplicates, redirects, commandstats), which load slows down but
// does not change, and shares the machine up to --jobs at a time.
var timedSuites = map[string]timedSuite{
	"./rows/failuredrills": {bound: "per-shard dispatch halts against the halt budget (seconds)"},
	"./rows/registry":      {bound: "discovery within one heartbeat (300 ms smoke, 500 ms full)"},
	"./rows/marconi":       {bound: "hook and SLA deadlines (500–750 ms)"},
	// Only marconi-loss-budget judges Offer's p99 (its ledger scenarios;
	// audit-completeness and stream pass no bound and count entries).
	"./rows/marconiaudit": {bound: "Offer p99 within 1 ms (memory speed)", alone: true, rows: []report.RowID{report.RowMarconiLossBudget}},
	// preflight's G5 busy-node variant needs one server given a whole core
	// (at least 90% of one by /proc), which a 2-core machine gives only
	// with nothing beside it.
	"./rows/preflight": {bound: "G5 CPU headroom: a busy node given a whole core", alone: true},
}

type timedSuite struct {
	bound string
	alone bool
	// rows, when set, are the package's only rows that judge the bound:
	// its other rows run as a job of their own that shares the machine
	// like any untimed suite (their own Ginkgo process, BeforeSuite
	// included), instead of holding the machine while they count events.
	rows []report.RowID
}

// exclusiveSuites are the timed suites that run alone, with their bound.
var exclusiveSuites = func() map[string]string {
	m := map[string]string{}
	for p, t := range timedSuites {
		if t.alone {
			m[p] = t.bound
		}
	}
	return m
}()

// defaultJobs is --jobs when not given: one suite per core. The suites
// mostly wait on timers (failover elections, TTL drains, load windows), so
// a core per suite leaves room; the timed ones share less (timedSuites).
func defaultJobs() int { return max(1, runtime.NumCPU()) }

// suiteJob is one suite package of a run: one ginkgo process with its own
// JSON report.
type suiteJob struct {
	pkg       string // ./rows/axioms
	name      string // axioms
	rows      []report.RowID
	exclusive string // why it runs alone; "" shares the machine
	timed     string // the bound it judges time against, when it shares with one untimed suite
	weight    float64

	cmd            *exec.Cmd
	started, ended time.Time
	err            error // ginkgo's exit (a failed spec exits 1)
	out            *suiteOutput
}

// cpu is the user and system time of the job's process tree: ginkgo, the
// suite binary it waited for and the servers that binary reaped (wait4's
// rusage of a child includes its own waited-for children). 0 before the
// job ended.
func (j *suiteJob) cpu() time.Duration {
	if j.cmd == nil || j.cmd.ProcessState == nil {
		return 0
	}
	return j.cmd.ProcessState.UserTime() + j.cmd.ProcessState.SystemTime()
}

// jsonName is the Ginkgo JSON report the job writes into --out.
func (j *suiteJob) jsonName() string { return "ginkgo-" + j.name + ".json" }

// planJobs turns the run's packages into jobs in start order: the ones that
// run alone first (nothing else is running yet), then the rest heaviest
// first, so the lanes end together (longest processing time first).
func planJobs(pkgs []string, rows []report.RowID, full bool) []*suiteJob {
	var jobs []*suiteJob
	for _, pkg := range pkgs {
		t, isTimed := timedSuites[pkg]
		j := &suiteJob{pkg: pkg, name: path.Base(pkg), exclusive: exclusiveSuites[pkg], weight: suiteWeight(pkg, full)}
		if isTimed && !t.alone {
			j.timed = t.bound
		}
		// rest: the package's rows that judge no bound, when the bound
		// is confined to some rows (timedSuite.rows).
		rest := &suiteJob{pkg: pkg, name: path.Base(pkg) + "-untimed"}
		for _, r := range rows {
			switch {
			case suiteOf[r] != pkg:
			case isTimed && len(t.rows) > 0 && !slices.Contains(t.rows, r):
				rest.rows = append(rest.rows, r)
			default:
				j.rows = append(j.rows, r)
			}
		}
		if len(rest.rows) > 0 {
			// The recorded weight is the package's; split it by rows.
			all := float64(len(j.rows) + len(rest.rows))
			rest.weight = j.weight * float64(len(rest.rows)) / all
			j.weight -= rest.weight
			jobs = append(jobs, rest)
		}
		if len(j.rows) > 0 || len(rest.rows) == 0 {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		if ea, eb := jobs[a].exclusive != "", jobs[b].exclusive != ""; ea != eb {
			return ea
		}
		if jobs[a].weight != jobs[b].weight {
			return jobs[a].weight > jobs[b].weight
		}
		return jobs[a].pkg < jobs[b].pkg
	})
	return jobs
}

// scheduler runs jobs: at most jobs at a time, an exclusive one alone.
type scheduler struct {
	jobs    int
	timeout time.Duration // the whole run's
	started time.Time
	start   func(j *suiteJob, timeout time.Duration) (<-chan error, error)
	con     *console
	ticker  time.Duration
}

// run starts and waits for every job. A signal on sig stops the schedule:
// no new suite starts, each running ginkgo gets one SIGINT (a second would
// skip its cleanup) and is waited for; the signal's name is returned. Jobs
// never started keep a zero started time.
func (s *scheduler) run(queue []*suiteJob, sig <-chan os.Signal) (interrupted string, err error) {
	type exit struct {
		j   *suiteJob
		err error
	}
	finished := make(chan exit)
	queue = slices.Clone(queue) // taken out of order below; the caller's slice stays whole
	var running []*suiteJob
	tick := time.NewTicker(s.ticker)
	defer tick.Stop()
	total := len(queue)
	for {
		for len(queue) > 0 && interrupted == "" {
			next := s.nextStart(queue, running)
			if next < 0 {
				break
			}
			j := queue[next]
			left := s.timeout - time.Since(s.started)
			if left <= 0 {
				break // the run's --timeout is spent: the rest is not run
			}
			s.con.attach(j)
			done, err := s.start(j, left)
			if err != nil {
				s.con.detach(j, "")
				s.interruptAll(running)
				for range running {
					e := <-finished
					e.j.err, e.j.ended = e.err, time.Now()
					s.con.detach(e.j, "")
				}
				return interrupted, fmt.Errorf("start ginkgo for %s: %w", j.pkg, err)
			}
			j.started = time.Now()
			queue = slices.Delete(queue, next, next+1)
			running = append(running, j)
			go func() { finished <- exit{j, <-done} }()
			s.con.status("▶ %s started%s · %d running · %d queued", j.name, alone(j), len(running), len(queue))
			if j.exclusive != "" {
				break
			}
		}
		if len(running) == 0 {
			return interrupted, nil
		}
		select {
		case sg := <-sig:
			if interrupted == "" {
				interrupted = signalName(sg)
				s.con.status("%s — stopping the suites and tearing down every server (wait for it)", interrupted)
				s.interruptAll(running)
			}
		case e := <-finished:
			e.j.err, e.j.ended = e.err, time.Now()
			awaitGroup(e.j.cmd.Process.Pid, s.con.stderr)
			running = slices.DeleteFunc(running, func(r *suiteJob) bool { return r == e.j })
			verdict := "done"
			if e.err != nil {
				verdict = "done (ginkgo: " + e.err.Error() + ")"
			}
			s.con.detach(e.j, fmt.Sprintf("■ %s %s in %s (cpu %s) · %d/%d suites finished", e.j.name, verdict, e.j.ended.Sub(e.j.started).Round(time.Second), e.j.cpu().Round(time.Second), total-len(queue)-len(running), total))
		case <-tick.C:
			names := make([]string, len(running))
			for i, r := range running {
				names[i] = fmt.Sprintf("%s %s", r.name, time.Since(r.started).Round(time.Second))
			}
			s.con.status("%s elapsed · %d/%d suites finished · running %s · %d queued", time.Since(s.started).Round(time.Second), total-len(queue)-len(running), total, strings.Join(names, ", "), len(queue))
		}
	}
}

// nextStart picks the queued suite to start next: the first, in queue order,
// that may start beside the running ones — except that a suite held back by
// the sharing rules holds the ones behind it when it waits for the machine to
// drain (one that runs alone, or a timed one while no timed suite runs):
// otherwise every lighter untimed suite behind it would overtake it and the
// heaviest-first order would end with the timed suite last (seen with
// --jobs 4). -1 when none may start now.
func (s *scheduler) nextStart(queue, running []*suiteJob) int {
	timedRunning := slices.ContainsFunc(running, func(r *suiteJob) bool { return r.timed != "" })
	for i, j := range queue {
		if s.mayStart(j, running) {
			return i
		}
		if j.exclusive != "" || (j.timed != "" && !timedRunning) {
			return -1
		}
	}
	return -1
}

// mayStart says whether j may start beside running: a suite that runs
// alone only on an empty machine and with nothing beside it; a timed one
// beside at most one untimed suite; the rest up to --jobs at a time.
func (s *scheduler) mayStart(j *suiteJob, running []*suiteJob) bool {
	if len(running) == 0 {
		return true
	}
	if j.exclusive != "" {
		return false
	}
	timed := j.timed != ""
	for _, r := range running {
		if r.exclusive != "" {
			return false
		}
		if r.timed != "" {
			if timed {
				return false
			}
			timed = true
		}
	}
	if timed {
		return len(running) < min(2, s.jobs)
	}
	return len(running) < s.jobs
}

func (s *scheduler) interruptAll(running []*suiteJob) {
	for _, r := range running {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
	}
}

func alone(j *suiteJob) string {
	if j.exclusive != "" {
		return " alone (" + j.exclusive + ")"
	}
	if j.timed != "" {
		return " beside at most one untimed suite (" + j.timed + ")"
	}
	return ""
}

// notifySignals routes the signals that stop a run to a channel.
func notifySignals() (chan os.Signal, func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return sig, func() { signal.Stop(sig) }
}

// console keeps concurrent suites' output readable: one suite at a time
// streams live (the oldest running); the others are held, line by line, and
// printed whole when they finish or when their turn to stream comes. The
// scheduler's own status lines go between lines, never inside one.
type console struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	live           *suiteJob
	running        []*suiteJob
}

// suiteOutput is the held output of one suite, both streams in order.
type suiteOutput struct {
	held    []heldLine
	partial [2]bytes.Buffer
}

type heldLine struct {
	stderr bool
	line   []byte
}

func (c *console) writer(stream int) io.Writer {
	if stream == 1 {
		return c.stderr
	}
	return c.stdout
}

// attach registers j as running; j streams live when no other suite does.
func (c *console) attach(j *suiteJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j.out = &suiteOutput{}
	c.running = append(c.running, j)
	if c.live == nil {
		c.live = j
	}
}

// detach ends j: whatever it held (and an unterminated last line) is
// printed, then the status line (if any), and the oldest suite still
// running streams next.
func (c *console) detach(j *suiteJob, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for stream := range j.out.partial {
		if b := &j.out.partial[stream]; b.Len() > 0 {
			b.WriteByte('\n')
			c.emit(j, stream, b.Bytes())
			b.Reset()
		}
	}
	c.flush(j)
	if status != "" {
		fmt.Fprintf(c.stdout, "slotgate: %s\n", status)
	}
	c.running = slices.DeleteFunc(c.running, func(r *suiteJob) bool { return r == j })
	if c.live == j {
		c.live = nil
		if len(c.running) > 0 {
			c.live = c.running[0]
			c.flush(c.live)
		}
	}
}

// flush prints what j held. Caller holds mu.
func (c *console) flush(j *suiteJob) {
	for _, l := range j.out.held {
		stream := 0
		if l.stderr {
			stream = 1
		}
		_, _ = c.writer(stream).Write(l.line)
	}
	j.out.held = nil
}

// emit prints or holds one complete line of j. Caller holds mu.
func (c *console) emit(j *suiteJob, stream int, line []byte) {
	if c.live == j {
		_, _ = c.writer(stream).Write(line)
		return
	}
	j.out.held = append(j.out.held, heldLine{stderr: stream == 1, line: slices.Clone(line)})
}

// status prints one scheduler line on stdout.
func (c *console) status(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.stdout, "slotgate: "+format+"\n", args...)
}

// stream is the io.Writer a job's ginkgo writes one of its streams to.
type stream struct {
	c   *console
	j   *suiteJob
	idx int // 0 stdout, 1 stderr
}

func (s stream) Write(p []byte) (int, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	b := &s.j.out.partial[s.idx]
	b.Write(p)
	for {
		i := bytes.IndexByte(b.Bytes(), '\n')
		if i < 0 {
			break
		}
		s.c.emit(s.j, s.idx, b.Next(i+1))
	}
	if b.Len() == 0 {
		b.Reset()
	}
	return len(p), nil
}

// loadReports reads the jobs' Ginkgo JSON reports from out. A started job
// that wrote none (it crashed before writing) is named in missing; its rows
// score as not run.
func loadReports(out string, jobs []*suiteJob) (reports []report.GinkgoReport, missing []*suiteJob, err error) {
	for _, j := range jobs {
		p := filepath.Join(out, j.jsonName())
		if !fileExists(p) {
			if !j.started.IsZero() {
				missing = append(missing, j)
			}
			continue
		}
		r, err := report.LoadGinkgoJSON(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read suite results of %s: %w", j.pkg, err)
		}
		reports = append(reports, r...)
	}
	return reports, missing, nil
}

// scheduleMeta records how the suites ran, for results.json.
func scheduleMeta(jobs int, began time.Time, all []*suiteJob) *report.Schedule {
	s := &report.Schedule{Jobs: jobs}
	for _, j := range all {
		if j.started.IsZero() {
			continue
		}
		s.Suites = append(s.Suites, report.SuiteRun{Package: j.pkg, Rows: j.rows, Exclusive: j.exclusive, Timed: j.timed,
			Start: report.Duration(j.started.Sub(began)), Wall: report.Duration(j.ended.Sub(j.started)), CPU: report.Duration(j.cpu())})
	}
	return s
}

// removeReports removes Ginkgo JSON files a previous run left in out.
func removeReports(out string) {
	old, _ := filepath.Glob(filepath.Join(out, "ginkgo*.json"))
	for _, p := range old {
		_ = os.Remove(p)
	}
	// The last run's histories: `check --from` must never judge them
	// against this run's results.
	_ = os.RemoveAll(filepath.Join(out, recheck.HistoriesDir))
}

// exclusiveLine names the suites that run alone.
func exclusiveLine(jobs []*suiteJob) string {
	var alone, timed []string
	for _, j := range jobs {
		switch {
		case j.exclusive != "":
			alone = append(alone, j.name)
		case j.timed != "":
			timed = append(timed, j.name)
		}
	}
	var parts []string
	if len(alone) > 0 {
		parts = append(parts, strings.Join(alone, ", ")+" run alone (a memory-speed bound)")
	}
	if len(timed) > 0 {
		parts = append(parts, strings.Join(timed, ", ")+" each run beside at most one untimed suite (a bound in milliseconds to seconds)")
	}
	if len(parts) == 0 {
		return "none measures time, so all share the machine"
	}
	return strings.Join(parts, "; ")
}
