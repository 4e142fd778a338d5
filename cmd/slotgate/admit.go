package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/slotgate/slotgate/report"
)

// `slotgate admit` is the upgrade gate for a client library (spec 000
// §Client Architecture: a client version is admitted by test, never
// assumed): the client-facing rows run once per listed release, each its
// own `slotgate run --client`, and one matrix (release × requirement)
// answers "may we move from vN to vM?". A requirement a later release meets
// worse than an earlier one is a regression: admit exits 1.

const admitHelp = `Usage: slotgate admit --client NAME@vA,vB[,...] [--client NAME@...] [flags]

Runs the client-facing rows (every row an admission requirement names, or
--row) once per listed client release, each built against that release in
a module copy (slotgate run --client), and writes one admission matrix:
release × requirement, each cell admitted / with impl wrapper / refused /
not assessed, with the library's own failure text, the library path the
run exercised and the seed that replays it.

  slotgate admit --client go-redis@v9.17.3,v9.23.0
  slotgate admit --client valkey-go@v1.0.73,v1.0.79 --profile full --out /tmp/adm

Writes admission.html and admission.json in --out, and each release's full
run (results.json, report.html) in --out/NAME@VERSION. Exit 0: every
release's run passed its gate and no later release meets a requirement
worse than an earlier one (an assessed requirement not assessed on a later
release counts as worse); 1: a regression, or a release's run failed or
did not complete; 2: bad input (a release the module proxy does not serve
or that impl does not compile against); 130: interrupted (the matrix of
the releases that ran is written).

Flags:
`

// clientFlags collects repeated --client values.
type clientFlags []string

func (c *clientFlags) String() string     { return strings.Join(*c, " ") }
func (c *clientFlags) Set(v string) error { *c = append(*c, v); return nil }

// AdmitMatrix is admission.json: one column per release.
type AdmitMatrix struct {
	Profile      string                   `json:"profile"`
	Seed         int64                    `json:"seed"`
	StartedAt    time.Time                `json:"started_at"`
	Rows         []report.RowID           `json:"rows"`
	Requirements []report.RequirementInfo `json:"requirements"`
	Releases     []AdmitRelease           `json:"releases"`
	// Regressions name each requirement a later release of a library meets
	// worse than an earlier one.
	Regressions []string `json:"regressions,omitempty"`
}

// AdmitRelease is one release's run and its admission column.
type AdmitRelease struct {
	Pin     string `json:"pin"`     // go-redis@v9.17.3, as asked
	Backend string `json:"backend"` // go-redis
	// Linked is the library and version the suites reported linking.
	Linked   string          `json:"linked"`
	Out      string          `json:"out"`
	Exit     int             `json:"exit"`
	Gate     string          `json:"gate"` // pass, fail, or "did not complete: ..."
	Duration report.Duration `json:"duration"`
	Cells    []AdmitCell     `json:"cells"`
}

// AdmitCell is one requirement's verdict for one release.
type AdmitCell struct {
	Requirement report.Requirement      `json:"requirement"`
	Verdict     report.AdmissionVerdict `json:"verdict"`
	Wrapper     string                  `json:"wrapper,omitempty"`
	Path        string                  `json:"path,omitempty"`
	Evidence    string                  `json:"evidence,omitempty"`
	Scenario    string                  `json:"scenario,omitempty"`
	Seed        int64                   `json:"seed,omitempty"`
	// Replay is the command that reruns the cell's row on this release.
	Replay string `json:"replay,omitempty"`
}

func cmdAdmit(args []string, stdout, stderr io.Writer) (int, error) {
	var clients clientFlags
	fs := flag.NewFlagSet("admit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&clients, "client", "`NAME@vA,vB,...`: the releases of one client library to admit (repeat for the other library)")
	rows := fs.String("row", "", "comma `list` of rows (default: every row an admission requirement names)")
	profile := fs.String("profile", "smoke", "smoke or full")
	seed := fs.Int64("seed", 0, "one seed for every release's run, so they meet the same schedule (default: random)")
	out := fs.String("out", "slotgate-admission", "directory for admission.html, admission.json and each release's run")
	extra := fs.String("run-args", "", "extra flags for every slotgate run, space-separated (e.g. \"--topology cluster:3x1\")")
	fs.Usage = func() { fmt.Fprint(stderr, admitHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, errHelp
		}
		return 0, fmt.Errorf("%w: %v (see slotgate admit --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q (see slotgate admit --help)", errUsage, fs.Arg(0))
	}
	if len(clients) == 0 {
		return 0, fmt.Errorf("%w: admit needs --client NAME@vA,vB (e.g. --client go-redis@v9.17.3,v9.23.0)", errUsage)
	}
	pins, err := parseClients(strings.Join(clients, ","), true)
	if err != nil {
		return 0, err
	}
	selected := *rows
	if strings.TrimSpace(selected) == "" {
		selected = strings.Join(admissionRows(), ",")
	}
	// Validate every release's run before the first starts: a bad row or
	// an unserved release must not surface an hour in.
	root, err := moduleRoot()
	if err != nil {
		return 0, err
	}
	plans := make([]plan, len(pins))
	for i, pin := range pins {
		f := runFlags{rows: selected, profile: *profile, seed: *seed, server: "valkey-server", timing: "scaled",
			topology: "cluster:3x1", backends: pin.Name, clients: pin.String(), quiet: true,
			out: filepath.Join(*out, pin.String()), provider: "local"}
		if err := applyRunArgs(&f, *extra); err != nil {
			return 0, err
		}
		if plans[i], err = validate(f); err != nil {
			return 0, err
		}
		if _, err := prepareClientModule(root, []clientPin{pin}, os.Environ(), stdout); err != nil {
			return 0, err
		}
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()%1_000_000_000 + 1
	}
	outDir, lock, err := openOut(*out)
	if err != nil {
		return 0, err
	}
	defer lock.release()
	*out = outDir
	m := AdmitMatrix{Profile: *profile, Seed: *seed, StartedAt: time.Now(), Requirements: report.Requirements}
	m.Rows = plans[0].rows
	interrupted := false
	for i, pin := range pins {
		p := plans[i]
		p.seed = *seed
		fmt.Fprintf(stdout, "\nslotgate admit: %s (%d of %d)\n", pin, i+1, len(pins))
		began := time.Now()
		code, err := execute(p, stdout, stderr)
		rel := AdmitRelease{Pin: pin.String(), Backend: pin.Name, Out: p.out, Exit: code, Duration: report.Duration(time.Since(began))}
		if err != nil {
			if errors.Is(err, errUsage) {
				return 0, err
			}
			rel.Gate = "did not complete: " + err.Error()
		} else if card, rerr := readResults(p.out); rerr != nil {
			rel.Gate = "did not complete: " + rerr.Error()
		} else {
			rel.fill(card, pin, p)
		}
		m.Releases = append(m.Releases, rel)
		if code == exitSignal {
			// Interrupted: the matrix of what ran is written, the rest
			// of the releases are not started.
			interrupted = true
			break
		}
	}
	m.Regressions = regressions(m.Releases)
	if err := writeAdmission(*out, m); err != nil {
		return 0, err
	}
	printAdmitMatrix(stdout, m)
	fmt.Fprintf(stdout, "admission: %s\n", filepath.Join(*out, "admission.html"))
	if interrupted {
		fmt.Fprintf(stdout, "INTERRUPTED after %d of %d releases\n", len(m.Releases), len(pins))
		return exitSignal, nil
	}
	// A release whose own run did not pass judged nothing trustworthy
	// (its admissions read not assessed): no upgrade answer rests on it.
	code := exitPass
	for _, r := range m.Releases {
		if r.Exit != exitPass || r.Gate != "pass" {
			fmt.Fprintf(stdout, "%s: its run did not pass (gate %s, exit %d): see %s\n", r.Pin, r.Gate, r.Exit, filepath.Join(r.Out, "report.html"))
			code = exitGateFail
		}
	}
	if len(m.Regressions) > 0 {
		code = exitGateFail
	}
	return code, nil
}

// admissionRows are the rows an admission requirement names, implemented,
// in catalogue order.
func admissionRows() []string {
	var out []string
	for _, r := range report.Catalogue {
		if !implemented(r.ID) {
			continue
		}
		if slices.ContainsFunc(report.Requirements, func(q report.RequirementInfo) bool { return q.Row == r.ID }) {
			out = append(out, string(r.ID))
		}
	}
	return out
}

// applyRunArgs parses --run-args with run's own flag set onto f.
func applyRunArgs(f *runFlags, extra string) error {
	if strings.TrimSpace(extra) == "" {
		return nil
	}
	fs := flag.NewFlagSet("run-args", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.topology, "topology", f.topology, "")
	fs.StringVar(&f.server, "server", f.server, "")
	fs.StringVar(&f.timing, "timing", f.timing, "")
	fs.StringVar(&f.haltBudget, "halt-budget", f.haltBudget, "")
	fs.StringVar(&f.ports, "ports", f.ports, "")
	fs.DurationVar(&f.timeout, "timeout", f.timeout, "")
	fs.IntVar(&f.jobs, "jobs", f.jobs, "")
	if err := fs.Parse(strings.Fields(extra)); err != nil {
		return fmt.Errorf("%w: --run-args %q: %v (admit passes --topology, --server, --timing, --halt-budget, --ports, --timeout, --jobs)", errUsage, extra, err)
	}
	fs.Visit(func(fl *flag.Flag) { f.jobsSet = f.jobsSet || fl.Name == "jobs" })
	return nil
}

// fill takes one release's column from its run's admission table.
func (r *AdmitRelease) fill(card *report.Scorecard, pin clientPin, p plan) {
	r.Gate = "fail"
	if pass, _ := card.Gate(); pass {
		r.Gate = "pass"
	}
	for _, c := range card.Meta.Clients {
		if strings.HasPrefix(c, pin.Name+" ") {
			r.Linked = c
		}
	}
	for _, info := range report.Requirements {
		cell := AdmitCell{Requirement: info.ID, Verdict: report.NotAssessed}
		for _, row := range card.Admission {
			if row.Backend != pin.Name || row.Requirement != info.ID {
				continue
			}
			cell.Verdict, cell.Wrapper = row.Verdict, row.Wrapper
			if len(row.Entries) > 0 {
				e := row.Entries[0]
				cell.Path, cell.Evidence, cell.Scenario, cell.Seed = e.Path, e.Evidence, e.Scenario, e.Seed
				cell.Replay = fmt.Sprintf("slotgate run --row %s --backend %s --client %s --profile %s --seed %d", info.Row, pin.Name, pin, p.profile, e.Seed)
			}
		}
		r.Cells = append(r.Cells, cell)
	}
}

// admitRank orders verdicts best first, for regressions: an assessed
// verdict that got worse between releases, or was not assessed at all on
// the later one (not assessed never counts as admitted).
func admitRank(v report.AdmissionVerdict) int {
	switch v {
	case report.Admitted:
		return 0
	case report.AdmittedWithWrapper:
		return 1
	case report.Refused:
		return 2
	}
	return -1 // not assessed: compares with nothing
}

// regressions lists each requirement a later release of a library meets
// worse than an earlier release of the same library (releases in the order
// given, oldest first as an upgrade reads).
func regressions(rels []AdmitRelease) []string {
	var out []string
	for j, later := range rels {
		for _, earlier := range rels[:j] {
			if earlier.Backend != later.Backend {
				continue
			}
			for k, c := range later.Cells {
				if k >= len(earlier.Cells) {
					break
				}
				was, is := admitRank(earlier.Cells[k].Verdict), admitRank(c.Verdict)
				if was >= 0 && (is > was || is < 0) {
					out = append(out, fmt.Sprintf("%s: %s %s, %s %s", c.Requirement, earlier.Pin, earlier.Cells[k].Verdict, later.Pin, c.Verdict))
				}
			}
		}
	}
	return out
}

func printAdmitMatrix(w io.Writer, m AdmitMatrix) {
	fmt.Fprintf(w, "\nadmission matrix (profile %s, seed %d):\n", m.Profile, m.Seed)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "REQUIREMENT")
	for _, r := range m.Releases {
		fmt.Fprintf(tw, "\t%s", r.Pin)
	}
	fmt.Fprintln(tw)
	for i, q := range m.Requirements {
		fmt.Fprint(tw, q.ID)
		for _, r := range m.Releases {
			v := "-"
			if i < len(r.Cells) {
				v = string(r.Cells[i].Verdict)
			}
			fmt.Fprintf(tw, "\t%s", v)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "(gate, time)")
	for _, r := range m.Releases {
		fmt.Fprintf(tw, "\t%s, %s", r.Gate, time.Duration(r.Duration).Round(time.Second))
	}
	fmt.Fprintln(tw)
	_ = tw.Flush()
	for _, reg := range m.Regressions {
		fmt.Fprintf(w, "REGRESSION %s\n", reg)
	}
}

//go:embed admit.html.tmpl
var admitHTMLSource string

var admitHTML = template.Must(template.New("admit").Funcs(template.FuncMap{
	"cell": func(r AdmitRelease, i int) AdmitCell {
		if i < len(r.Cells) {
			return r.Cells[i]
		}
		return AdmitCell{Verdict: report.NotAssessed}
	},
	"dur": func(d report.Duration) string { return time.Duration(d).Round(time.Second).String() },
}).Parse(admitHTMLSource))

func writeAdmission(dir string, m AdmitMatrix) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("admission.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "admission.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("admission.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "admission.html"))
	if err != nil {
		return fmt.Errorf("admission.html: %w", err)
	}
	if err := admitHTML.Execute(f, m); err != nil {
		f.Close()
		return fmt.Errorf("admission.html: %w", err)
	}
	return f.Close()
}
