package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/slotgate/slotgate/report"
)

const stabilityHelp = `Usage: slotgate stability [--runs N] [--row LIST] [--profile smoke] [--out DIR]

Runs the selected rows N times (slotgate run, a fresh seed each time), prints
a flip table (cell × run) and every non-pass cell with the seed of its run,
then replays each failing row alone with that seed and says whether the
replay reproduces the cell. A verdict that flips between runs is a defect
(the implementation's or the harness's): a gate that flips gets re-run until
green, and then it gates nothing.

Writes DIR/run-<i>/ (each run's report), DIR/replay-<i>-<row>/, their logs,
and DIR/stability.json and DIR/stability.md (the table). Exits 0 when every
cell passed in every run, 1 otherwise, 2 on bad input, 130 interrupted.

Flags:
`

// stabilityRun is one run of the rows (or a replay of one row) and what it
// scored.
type stabilityRun struct {
	Index int            `json:"index"` // 1-based
	Seed  int64          `json:"seed"`
	Rows  []report.RowID `json:"rows,omitempty"`
	Exit  int            `json:"exit"`
	Out   string         `json:"out"`
	// Card is the run's scorecard; nil when it wrote no results.
	Card *report.Scorecard `json:"-"`
}

// cellKey names one scorecard cell.
type cellKey struct {
	Row    report.RowID  `json:"row"`
	Column report.Column `json:"column"`
}

func (k cellKey) String() string { return string(k.Row) + "/" + string(k.Column) }

// flipRow is one cell across the runs.
type flipRow struct {
	Cell cellKey `json:"cell"`
	// Status is the cell's status in each run, in run order; "" when that
	// run wrote no results.
	Status []report.Status `json:"status"`
	// Flips: the runs that scored the cell disagree.
	Flips bool `json:"flips"`
}

// nonPass is one cell that did not pass in one run, and its replay.
type nonPass struct {
	Run     int           `json:"run"`
	Seed    int64         `json:"seed"`
	Cell    cellKey       `json:"cell"`
	Status  report.Status `json:"status"`
	Summary string        `json:"summary"`
	// Replayed: the row was replayed alone with Seed; Replay is the cell's
	// status in the replay ("" when the replay wrote no results).
	Replayed   bool          `json:"replayed"`
	Replay     report.Status `json:"replay,omitempty"`
	Reproduced bool          `json:"reproduced"`
}

// stabilityCells lists the cells the runs are held to: the requested rows'
// cells of every run's scorecard, in scorecard order.
func stabilityCells(runs []stabilityRun) []cellKey {
	var out []cellKey
	for _, r := range runs {
		if r.Card == nil {
			continue
		}
		for _, id := range r.Card.Requested() {
			for _, col := range report.Columns {
				if k := (cellKey{id, col}); !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// cellStatus is the status of k in r, "" when r has no results, not-run
// when its scorecard lacks the cell.
func cellStatus(r stabilityRun, k cellKey) report.Status {
	if r.Card == nil {
		return ""
	}
	if c := r.Card.Cell(k.Row, k.Column); c != nil {
		return c.Status
	}
	return report.StatusNotRun
}

// flipTable is every held cell across the runs. A cell flips when the runs
// that wrote results disagree on it; a run without results is a non-pass of
// the run, not a flip of each cell.
func flipTable(runs []stabilityRun) []flipRow {
	var out []flipRow
	for _, k := range stabilityCells(runs) {
		fr := flipRow{Cell: k}
		var seen report.Status
		for _, r := range runs {
			st := cellStatus(r, k)
			fr.Status = append(fr.Status, st)
			if st == "" {
				continue
			}
			if seen != "" && st != seen {
				fr.Flips = true
			}
			seen = st
		}
		out = append(out, fr)
	}
	return out
}

// nonPassCells lists every cell that did not pass, run by run.
func nonPassCells(runs []stabilityRun) []nonPass {
	var out []nonPass
	cells := stabilityCells(runs)
	for _, r := range runs {
		for _, k := range cells {
			st := cellStatus(r, k)
			// A partial cell is the topology's (scenarios it cannot
			// host), the same in every run: nothing to replay.
			if st == "" || st == report.StatusPass || st == report.StatusPartial {
				continue
			}
			np := nonPass{Run: r.Index, Seed: r.Seed, Cell: k, Status: st}
			if c := r.Card.Cell(k.Row, k.Column); c != nil {
				np.Summary = c.Summary
			}
			out = append(out, np)
		}
	}
	return out
}

// judgeReplay records a replay's verdict on a non-pass cell: reproduced
// when the replay scored the cell the same non-pass status.
func judgeReplay(np *nonPass, replay stabilityRun) {
	np.Replayed = true
	np.Replay = cellStatus(replay, np.Cell)
	np.Reproduced = np.Replay == np.Status
}

type stabilityFlags struct {
	runs    int
	rows    string
	profile string
	out     string
	replay  bool
	extra   string
	clients string // --client, passed to every run
}

func cmdStability(args []string, stdout, stderr io.Writer) (int, error) {
	var f stabilityFlags
	fs := flag.NewFlagSet("stability", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.runs, "runs", 5, "how many runs, each with a fresh seed")
	fs.StringVar(&f.rows, "row", "", "comma `list` of rows (default: every implemented row)")
	fs.StringVar(&f.profile, "profile", "smoke", "smoke or full")
	fs.StringVar(&f.out, "out", "slotgate-report-stability", "directory for the runs' reports and the table")
	fs.BoolVar(&f.replay, "replay", true, "replay each failing row alone with its run's seed")
	fs.StringVar(&f.extra, "run-args", "", "extra flags for every slotgate run, space-separated (e.g. \"--backend go-redis\")")
	fs.StringVar(&f.clients, "client", "", "`name@version` list: every run links these client releases (slotgate run --client)")
	fs.Usage = func() { fmt.Fprint(stderr, stabilityHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, errHelp
		}
		return 0, fmt.Errorf("%w: %v (see slotgate stability --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q (see slotgate stability --help)", errUsage, fs.Arg(0))
	}
	if f.runs < 1 {
		return 0, fmt.Errorf("%w: --runs must be at least 1, got %d", errUsage, f.runs)
	}
	if _, err := parseRows(f.rows); err != nil {
		return 0, err
	}
	if f.clients != "" {
		if _, err := parseClients(f.clients, false); err != nil {
			return 0, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find slotgate: %w", err)
	}
	out, lock, err := openOut(f.out)
	if err != nil {
		return 0, err
	}
	defer lock.release()

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	// one runs `slotgate run` as a child that dies with this process
	// (startOwned) and is told about our interrupt.
	one := func(name string, seed int64, rows string) (stabilityRun, bool) {
		r := stabilityRun{Seed: seed, Out: filepath.Join(out, name)}
		args := []string{"run", "--profile", f.profile, "--seed", strconv.FormatInt(seed, 10), "--out", r.Out, "--quiet"}
		if rows != "" {
			args = append(args, "--row", rows)
		}
		if f.clients != "" {
			args = append(args, "--client", f.clients)
		}
		args = append(args, strings.Fields(f.extra)...)
		log, err := os.Create(filepath.Join(out, name+".log"))
		if err != nil {
			fmt.Fprintf(stderr, "stability: %v\n", err)
			return r, false
		}
		defer log.Close()
		_ = os.Remove(filepath.Join(r.Out, "results.json"))
		cmd := exec.Command(self, args...)
		cmd.Stdout, cmd.Stderr = log, log
		done, err := startOwned(cmd)
		if err != nil {
			fmt.Fprintf(stderr, "stability: start %s: %v\n", name, err)
			return r, false
		}
		interrupted := false
		for waiting := true; waiting; {
			select {
			case <-sig:
				if !interrupted {
					interrupted = true
					fmt.Fprintf(stderr, "\nstability: interrupted — stopping %s (wait for its teardown)\n", name)
					_ = cmd.Process.Signal(syscall.SIGINT)
				}
			case <-done:
				waiting = false
			}
		}
		r.Exit = cmd.ProcessState.ExitCode()
		if b, err := os.Open(filepath.Join(r.Out, "results.json")); err == nil {
			r.Card, err = report.ReadJSON(b)
			b.Close()
			if err != nil {
				fmt.Fprintf(stderr, "stability: %s: %v\n", name, err)
			}
		}
		return r, !interrupted && r.Exit != exitSignal && r.Exit != exitUsage
	}

	var runs []stabilityRun
	stopped := false
	for i := 1; i <= f.runs && !stopped; i++ {
		seed := rand.Int64N(1_000_000_000) + 1
		fmt.Fprintf(stdout, "stability: run %d/%d · seed %d … ", i, f.runs, seed)
		r, ok := one(fmt.Sprintf("run-%d", i), seed, f.rows)
		r.Index = i
		fmt.Fprintln(stdout, runLine(r))
		runs = append(runs, r)
		stopped = !ok
	}
	nps := nonPassCells(runs)
	if f.replay && !stopped {
		type replayKey struct {
			run int
			row report.RowID
		}
		replays := map[replayKey]stabilityRun{}
		for i := range nps {
			np := &nps[i]
			key := replayKey{np.Run, np.Cell.Row}
			rep, done := replays[key]
			if !done && !stopped {
				fmt.Fprintf(stdout, "stability: replay run %d's %s · seed %d … ", np.Run, np.Cell.Row, np.Seed)
				var ok bool
				rep, ok = one(fmt.Sprintf("replay-%d-%s", np.Run, np.Cell.Row), np.Seed, string(np.Cell.Row))
				rep.Index, rep.Rows = np.Run, []report.RowID{np.Cell.Row}
				fmt.Fprintln(stdout, runLine(rep))
				replays[key], done, stopped = rep, true, !ok
			}
			if done {
				judgeReplay(np, rep)
			}
		}
	}
	table := flipTable(runs)
	fmt.Fprintln(stdout)
	writeFlipTable(stdout, runs, table, nps)
	if err := writeStabilityFiles(out, runs, table, nps); err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "stability: %s, %s\n", filepath.Join(out, "stability.md"), filepath.Join(out, "stability.json"))
	if stopped {
		return exitSignal, nil
	}
	if len(nps) > 0 || slices.ContainsFunc(runs, func(r stabilityRun) bool { return r.Card == nil }) {
		return exitGateFail, nil
	}
	return exitPass, nil
}

// runLine sums up one run for the progress line.
func runLine(r stabilityRun) string {
	if r.Card == nil {
		return fmt.Sprintf("exit %d, no results (log: %s.log)", r.Exit, r.Out)
	}
	t := r.Card.Tally()
	return fmt.Sprintf("exit %d · %d pass, %d fail, %d blind, %d not run · %s", r.Exit, t.Pass, t.Fail, t.Blind, t.NotRun, time.Duration(r.Card.Meta.Duration).Round(time.Second))
}

// writeFlipTable prints the cells that did not pass in every run (the
// all-pass ones are counted), then every non-pass cell with its seed and
// replay, then the tally of flips.
func writeFlipTable(w io.Writer, runs []stabilityRun, table []flipRow, nps []nonPass) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "CELL"
	for _, r := range runs {
		head += fmt.Sprintf("\trun %d", r.Index)
	}
	var lines []string
	allPass, flips := 0, 0
	for _, fr := range table {
		if fr.Flips {
			flips++
		}
		if !fr.Flips && !slices.ContainsFunc(fr.Status, func(s report.Status) bool { return s != report.StatusPass && s != "" }) {
			allPass++
			continue
		}
		line := fr.Cell.String()
		for _, st := range fr.Status {
			line += "\t" + statusWord(st)
		}
		if fr.Flips {
			line += "\tFLIPS"
		}
		lines = append(lines, line+"\t")
	}
	if len(lines) > 0 {
		fmt.Fprintln(tw, head+"\t")
		for _, l := range lines {
			fmt.Fprintln(tw, l)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "(%s pass in every run that wrote results)\n", plural(allPass, "cell"))
	for _, r := range runs {
		if r.Card == nil {
			fmt.Fprintf(w, "run %d (seed %d) wrote no results: exit %d, see %s.log\n", r.Index, r.Seed, r.Exit, r.Out)
		}
	}
	if len(nps) > 0 {
		fmt.Fprintln(w, "\nnon-pass cells:")
	}
	for _, np := range nps {
		fmt.Fprintf(w, "  run %d · seed %d · %s %s: %s\n", np.Run, np.Seed, np.Cell, statusWord(np.Status), np.Summary)
		replay := fmt.Sprintf("slotgate run --row %s --seed %d", np.Cell.Row, np.Seed)
		switch {
		case !np.Replayed:
			fmt.Fprintf(w, "    not replayed (%s)\n", replay)
		case np.Reproduced:
			fmt.Fprintf(w, "    replay reproduces it (%s → %s)\n", replay, statusWord(np.Replay))
		default:
			fmt.Fprintf(w, "    replay does NOT reproduce it (%s → %s)\n", replay, statusWord(np.Replay))
		}
	}
	fmt.Fprintf(w, "\nstability: %s of %s flipped over %s; %s\n", plural(flips, "cell"), plural(len(table), "cell"), plural(len(runs), "run"), plural(len(nps), "non-pass cell"))
}

func statusWord(st report.Status) string {
	switch st {
	case "":
		return "(none)"
	case report.StatusPass:
		return "pass"
	}
	return strings.ToUpper(string(st))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeStabilityFiles writes stability.json (the runs, the table, the
// non-pass cells) and stability.md (the table as Markdown, for a note).
func writeStabilityFiles(dir string, runs []stabilityRun, table []flipRow, nps []nonPass) error {
	b, err := json.MarshalIndent(struct {
		Runs    []stabilityRun `json:"runs"`
		Table   []flipRow      `json:"table"`
		NonPass []nonPass      `json:"non_pass,omitempty"`
	}{runs, table, nps}, "", "  ")
	if err != nil {
		return fmt.Errorf("write stability.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stability.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write stability.json: %w", err)
	}
	var md strings.Builder
	md.WriteString("| cell |")
	for _, r := range runs {
		fmt.Fprintf(&md, " run %d (seed %d) |", r.Index, r.Seed)
	}
	md.WriteString(" flips |\n|---|")
	for range runs {
		md.WriteString("---|")
	}
	md.WriteString("---|\n")
	for _, fr := range table {
		fmt.Fprintf(&md, "| `%s` |", fr.Cell)
		for _, st := range fr.Status {
			fmt.Fprintf(&md, " %s |", statusWord(st))
		}
		if fr.Flips {
			md.WriteString(" **flips** |\n")
		} else {
			md.WriteString(" |\n")
		}
	}
	for _, np := range nps {
		fmt.Fprintf(&md, "\n- run %d, seed %d, `%s` %s: %s", np.Run, np.Seed, np.Cell, statusWord(np.Status), strings.ReplaceAll(np.Summary, "|", `\|`))
		switch {
		case !np.Replayed:
			md.WriteString(" — not replayed")
		case np.Reproduced:
			md.WriteString(" — replay reproduces it")
		default:
			fmt.Fprintf(&md, " — replay does not reproduce it (%s)", statusWord(np.Replay))
		}
	}
	md.WriteString("\n")
	if err := os.WriteFile(filepath.Join(dir, "stability.md"), []byte(md.String()), 0o644); err != nil {
		return fmt.Errorf("write stability.md: %w", err)
	}
	return nil
}
