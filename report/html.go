package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var htmlSource string

// htmlTemplate is parsed once; html/template escapes every value, so a
// message holding markup renders as text.
var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// WriteHTML writes the reviewer's report: one self-contained HTML file
// (inline CSS, a few lines of inline JS, no external resource) that opens
// from disk and prints. The gate verdict and run meta come first, then the
// scorecard, whose cells link to their evidence.
func WriteHTML(w io.Writer, s *Scorecard) error {
	if err := htmlTemplate.Execute(w, newHTMLView(s)); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

type htmlView struct {
	Pass      bool
	Verdict   string
	Detail    string
	Reasons   []htmlReason
	Meta      []htmlKV
	Lines     []htmlKV // full-width meta: rows, command
	Rows      []htmlRow
	Unlisted  []Row // neither requested nor run: named, not drawn
	Attention []htmlCell
	Passing   []htmlCell
	Version   string
	Admission htmlAdmission // the client admission table (admission_render.go)
	// Departures are the spec departures of the listed rows (departure.go).
	Departures []Departure
}

// htmlReason is one gate reason split for display: "path: status — text".
type htmlReason struct{ Path, Class, Status, Text, Anchor string }

type htmlKV struct {
	Key, Value string
	Wide       bool // spans two columns of the meta grid
}

type htmlRow struct {
	Row       Row
	Requested bool
	Time      string // the row's summed scenario time (Meta.Timing)
	Cells     []htmlCell
}

type htmlCell struct {
	ID          string
	RowTitle    string
	Path        string
	ColumnTitle string
	Class       string
	Label       string
	Count       string
	Summary     string
	Open        bool
	// Note is why a cell was not run at all (Meta.NotRun), shown in it.
	Note   string
	Checks []htmlCheck
}

type htmlCheck struct {
	Check
	ID      string
	Class   string
	Label   string
	Why     string
	Open    bool
	Metrics []htmlKV
	Timings []htmlKV
	Faults  []htmlFault
	Facts   []htmlKV
	Replay  string
	// TimelineSVG is the scenario's timeline drawn inline (RenderSVG).
	TimelineSVG template.HTML
}

type htmlFault struct{ Fault, Target, Start, End, Length string }

func newHTMLView(s *Scorecard) htmlView {
	pass, reasons := s.Gate()
	verdict, detail, _ := strings.Cut(s.headline(), " — ")
	v := htmlView{Pass: pass, Verdict: verdict, Detail: detail}
	for _, r := range reasons {
		v.Reasons = append(v.Reasons, newHTMLReason(s, r))
	}
	for _, kv := range metaLines(s) {
		switch kv[0] {
		case "Rows", "Command":
			v.Lines = append(v.Lines, htmlKV{Key: kv[0], Value: kv[1]})
		default:
			v.Meta = append(v.Meta, htmlKV{Key: kv[0], Value: kv[1], Wide: len(kv[1]) > 24})
		}
	}
	for _, row := range s.Rows {
		hr := htmlRow{Row: row, Requested: s.IsRequested(row.ID), Time: s.Meta.Timing.rowTime(row.ID)}
		if !s.listed(row.ID) {
			v.Unlisted = append(v.Unlisted, row)
			continue
		}
		for _, col := range Columns {
			hc := newHTMLCell(s, row, s.Cell(row.ID, col), hr.Requested)
			hr.Cells = append(hr.Cells, hc)
			switch {
			case len(hc.Checks) == 0:
			case hc.Open:
				v.Attention = append(v.Attention, hc)
			default:
				v.Passing = append(v.Passing, hc)
			}
		}
		v.Rows = append(v.Rows, hr)
	}
	if len(s.Unscored) > 0 {
		hc := htmlCell{
			ID: "unscored", RowTitle: "Unscored checks", Path: "outside the catalogue",
			Class: "fail", Label: "fail", Open: true,
			Count:   plural(len(s.Unscored), "check"),
			Summary: "these checks name a row or column this scorecard does not have",
		}
		for i, c := range s.Unscored {
			hc.Checks = append(hc.Checks, newHTMLCheck(s, c, fmt.Sprintf("unscored-%d", i+1)))
		}
		v.Attention = append(v.Attention, hc)
	}
	v.Version = s.Meta.Version
	v.Admission = newHTMLAdmission(s)
	v.Departures = s.Departures
	return v
}

// newHTMLReason splits a gate reason and links it to its cell's evidence.
func newHTMLReason(s *Scorecard, r string) htmlReason {
	path, rest, _ := strings.Cut(r, ": ")
	hr := htmlReason{Path: path, Text: rest}
	if st, text, ok := strings.Cut(rest, " — "); ok {
		switch Status(st) {
		case StatusFail, StatusInconclusive, StatusBlind, StatusNotRun, StatusPass, StatusPartial:
			hr.Class, hr.Status, hr.Text = statusClass(Status(st)), statusLabel(Status(st)), text
		}
	}
	if hr.Class == "" {
		hr.Class = "fail"
	}
	if row, col, ok := strings.Cut(path, "/"); ok {
		if c := s.Cell(RowID(row), Column(col)); c != nil && len(c.Checks) > 0 {
			hr.Anchor = cellID(c.Row, c.Column)
		}
	}
	return hr
}

func newHTMLCell(s *Scorecard, row Row, c *Cell, requested bool) htmlCell {
	hc := htmlCell{
		ID:          cellID(c.Row, c.Column),
		RowTitle:    row.Title,
		Path:        string(c.Row) + "/" + string(c.Column),
		ColumnTitle: columnTitle(c.Column),
		Class:       statusClass(c.Status),
		Label:       statusLabel(c.Status),
		Count:       plural(len(c.Checks), "check"),
		Summary:     c.Summary,
		Open:        c.Status == StatusFail || c.Status == StatusBlind || c.Status == StatusInconclusive,
	}
	if c.Status == StatusNotRun {
		hc.Count = ""
		if !requested {
			hc.Label = "not requested"
		}
		if s.Meta.NotRun[c.Row] != "" {
			hc.Label, hc.Note = "not run", c.Summary
		}
		if s.cellInterrupted(c) {
			hc.Label, hc.Note = "interrupted", c.Summary
		}
	}
	for i, ch := range c.Checks {
		hc.Checks = append(hc.Checks, newHTMLCheck(s, ch, fmt.Sprintf("%s-%d", hc.ID, i+1)))
	}
	return hc
}

func newHTMLCheck(s *Scorecard, c Check, id string) htmlCheck {
	v := c.Verdict()
	e := c.Evidence
	hc := htmlCheck{
		Check:  c,
		ID:     id,
		Class:  statusClass(v),
		Label:  statusLabel(v),
		Open:   v != StatusPass,
		Replay: c.Replay(),
	}
	switch c.Status {
	case StatusFail:
	case StatusUnknown:
		hc.Why = "the checker could not decide; its assumptions did not hold"
	case StatusBlind:
		hc.Why = "the checker reported itself blind"
	case StatusInconclusive:
		hc.Why = c.Reason() + ": the harness could not inject or confirm its fault, so this is no verdict on the implementation"
	case StatusPass:
		switch {
		case len(c.Controls) == 0:
			hc.Why = "it has no negative control, so nothing shows this checker can fail"
		case len(c.Uncaught()) > 0:
			hc.Why = c.Reason() + ": the checker passed a known-bad variant, so its pass proves nothing"
		case c.VariantsCaught() == 0:
			hc.Why = c.Reason() + ": only a real bad variant run against real servers proves the row can fail"
		}
	default:
		hc.Why = c.Reason()
	}
	for _, k := range sortedKeys(e.Metrics) {
		hc.Metrics = append(hc.Metrics, htmlKV{Key: k, Value: formatFloat(e.Metrics[k])})
	}
	for _, k := range sortedKeys(e.Timings) {
		hc.Timings = append(hc.Timings, htmlKV{Key: k, Value: formatDuration(e.Timings[k])})
	}
	for _, f := range e.Faults {
		hc.Faults = append(hc.Faults, htmlFault{
			Fault:  f.Fault,
			Target: f.Target,
			Start:  offset(s.Meta.StartedAt, f.Start),
			End:    offset(s.Meta.StartedAt, f.End),
			Length: formatDuration(Duration(f.End.Sub(f.Start))),
		})
	}
	if e.Timeline != nil {
		hc.TimelineSVG = RenderSVG(*e.Timeline)
	}
	add := func(k, v string) {
		if v != "" {
			hc.Facts = append(hc.Facts, htmlKV{Key: k, Value: v})
		}
	}
	add("Seed", fmt.Sprint(e.Seed))
	add("Topology", e.Topology)
	add("Server", e.Server)
	add("Client", e.Client)
	add("Profile", e.Profile)
	add("Timing", e.Timing)
	if e.Duration != 0 {
		add("Duration", formatDuration(e.Duration))
	}
	return hc
}

// offset renders t as an offset into the run when the start is known
// ("+1m2s"), else as a UTC time of day.
func offset(start, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if start.IsZero() || t.Before(start) {
		return clock(t)
	}
	return "+" + formatDuration(Duration(t.Sub(start))) + " (" + clock(t) + ")"
}

func cellID(row RowID, col Column) string { return "cell-" + string(row) + "-" + string(col) }

func columnTitle(c Column) string {
	switch c {
	case ColumnErrors:
		return "Errors"
	case ColumnSilentlyWrong:
		return "Silently wrong"
	}
	return string(c)
}

func statusClass(s Status) string {
	switch s {
	case StatusPass, StatusFail, StatusBlind, StatusPartial:
		return string(s)
	case StatusInconclusive:
		return string(StatusBlind) // amber: fails the gate, names the harness
	}
	return "not-run"
}

func statusLabel(s Status) string {
	switch s {
	case StatusPass, StatusFail, StatusBlind, StatusInconclusive, StatusPartial:
		return string(s)
	}
	return "not run"
}
