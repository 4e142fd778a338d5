package mutate

import (
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slotgate/slotgate/report"
)

// Meta describes a mutation run.
type Meta struct {
	StartedAt   time.Time      `json:"started_at"`
	Seconds     float64        `json:"seconds"`
	Profile     string         `json:"profile"`
	Seed        int64          `json:"seed"`
	Rows        []report.RowID `json:"rows"`
	Kinds       []Kind         `json:"kinds"`
	Scripts     string         `json:"scripts"` // the script set's name and directory
	Generated   int            `json:"generated"`
	Max         int            `json:"max"`
	MinKill     float64        `json:"min_kill"`
	CommandLine string         `json:"command_line"`
	// BuildSeconds and BaselineSeconds are the one-off costs before the
	// first mutant: compiling the suites and the unmutated baseline run.
	BuildSeconds    float64 `json:"build_seconds"`
	BaselineSeconds float64 `json:"baseline_seconds"`
	// MutantsSeconds is the wall-clock time of the Go mutants' pool (with
	// --jobs > 1 less than the sum of their Seconds).
	MutantsSeconds float64  `json:"mutants_seconds,omitempty"`
	Jobs           int      `json:"jobs,omitempty"`
	Notes          []string `json:"notes,omitempty"`
}

// Report is mutation.json.
type Report struct {
	Meta    Meta     `json:"meta"`
	Summary Summary  `json:"summary"`
	Pass    bool     `json:"pass"` // kill rate ≥ min_kill, no errors, at least one mutant decided
	Results []Result `json:"results"`
}

// NewReport tallies results and judges the kill rate against meta.MinKill.
func NewReport(meta Meta, results []Result) *Report {
	s := Summarize(results)
	return &Report{Meta: meta, Summary: s, Pass: s.Total.KillRate >= meta.MinKill && s.Total.Errors == 0 && s.Total.Killed+s.Total.Survived > 0, Results: results}
}

// Write writes mutation.json and mutation.html into dir.
func (r *Report) Write(dir string) (jsonPath, htmlPath string, err error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("encode mutation.json: %w", err)
	}
	jsonPath, htmlPath = filepath.Join(dir, "mutation.json"), filepath.Join(dir, "mutation.html")
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return "", "", fmt.Errorf("write mutation.json: %w", err)
	}
	f, err := os.Create(htmlPath)
	if err != nil {
		return "", "", fmt.Errorf("write mutation.html: %w", err)
	}
	defer f.Close()
	if err := page.Execute(f, r); err != nil {
		return "", "", fmt.Errorf("render mutation.html: %w", err)
	}
	return jsonPath, htmlPath, f.Close()
}

// ReadReport reads a mutation.json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mutation report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return &r, nil
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func rows(rs []report.RowID) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

var page = template.Must(template.New("mutation").Funcs(template.FuncMap{"pct": pct, "rows": rows,
	"add": func(a, b int) int { return a + b },
	"sum": func(rs []Result) float64 {
		t := 0.0
		for _, r := range rs {
			t += r.Seconds
		}
		return t
	},
	"secs": func(f float64) string { return fmt.Sprintf("%.1fs", f) },
	"per": func(total float64, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1fs", total/float64(n))
	}}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>slotgate mutation report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.pass{color:#176f2c;font-weight:bold}.fail{color:#b00020;font-weight:bold}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;margin:.3em 0}.killed{color:#176f2c}.survived{color:#b00020;font-weight:bold}.equivalent{color:#555}.error{color:#a15c00}
details{margin:.3em 0}summary{cursor:pointer}code{background:#f3f3f3;padding:0 .2em}
</style></head><body>
<h1>slotgate mutate</h1>
<p class="{{if .Pass}}pass{{else}}fail{{end}}">kill rate {{pct .Summary.Total.KillRate}} of {{add .Summary.Total.Killed .Summary.Total.Survived}} non-equivalent mutants (min {{pct .Meta.MinKill}}): {{if .Pass}}PASS{{else}}FAIL{{end}}</p>
<p>{{.Summary.Total.Killed}} killed · {{.Summary.Total.Survived}} survived · {{.Summary.Total.Equivalent}} equivalent · {{.Summary.Total.Errors}} errors —
profile {{.Meta.Profile}}, seed {{.Meta.Seed}}, rows {{rows .Meta.Rows}}, scripts {{.Meta.Scripts}};
{{.Meta.Generated}} generated{{if .Meta.Max}}, {{len .Results}} sampled (--max {{.Meta.Max}}){{end}}.
Total {{secs .Meta.Seconds}} (build {{secs .Meta.BuildSeconds}}, baseline {{secs .Meta.BaselineSeconds}}, {{per (sum .Results) (len .Results)}} per mutant).</p>
<p><code>{{.Meta.CommandLine}}</code></p>
{{range .Meta.Notes}}<p>{{.}}</p>{{end}}
<h2>Kill rate per row</h2>
<p>A row is credited with the mutants it ran; a mutant stops at its first killer unless every row was asked for, so later rows ran fewer.</p>
<table><tr><th>row</th><th>ran</th><th>killed</th><th>survived</th><th>equivalent</th><th>kill rate</th></tr>
{{range .Summary.ByRow}}<tr><td>{{.Name}}</td><td>{{.Mutants}}</td><td>{{.Killed}}</td><td>{{.Survived}}</td><td>{{.Equivalent}}</td><td>{{pct .KillRate}}</td></tr>{{end}}</table>
<h2>Kill rate per package / script</h2>
<table><tr><th>group</th><th>mutants</th><th>killed</th><th>survived</th><th>equivalent</th><th>errors</th><th>kill rate</th></tr>
{{range .Summary.ByGroup}}<tr><td>{{.Name}}</td><td>{{.Mutants}}</td><td>{{.Killed}}</td><td>{{.Survived}}</td><td>{{.Equivalent}}</td><td>{{.Errors}}</td><td>{{pct .KillRate}}</td></tr>{{end}}</table>
<h2>Survivors</h2>
{{range .Results}}{{if eq .Status "survived"}}<div><p class="survived">{{.ID}} — {{.Operator}}: {{.Desc}} ({{.File}}:{{.Line}}{{if .Func}} {{.Func}}{{end}}) — ran by {{rows .Ran}}{{if .Reason}}; {{.Reason}}{{end}}</p><pre>{{.Diff}}</pre></div>{{end}}{{else}}<p>none</p>{{end}}
<h2>Equivalent</h2>
{{range .Results}}{{if eq .Status "equivalent"}}<details><summary class="equivalent">{{.ID}} — {{.Desc}}: {{.Reason}}</summary><pre>{{.Diff}}</pre></details>{{end}}{{end}}
<h2>Errors</h2>
{{range .Results}}{{if eq .Status "error"}}<details><summary class="error">{{.ID}} — {{.Reason}}</summary><pre>{{.Diff}}</pre></details>{{end}}{{end}}
<h2>Every mutant</h2>
<table><tr><th>mutant</th><th>operator</th><th>status</th><th>killed by</th><th>time</th></tr>
{{range .Results}}<tr><td><details><summary>{{.ID}}</summary><pre>{{.Diff}}</pre></details></td><td>{{.Operator}}: {{.Desc}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{with .Killer}}{{.Row}} · {{.Column}} · {{.Check}}<br><small>{{.Message}}</small>{{end}}</td><td>{{secs .Seconds}}</td></tr>
{{end}}</table>
</body></html>
`))
