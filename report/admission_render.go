package report

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"slices"
	"strings"
)

// The admission table's renderers, kept apart from the scorecard's: each
// writer calls one function here after its own gate section.

// admissionRows is the run's admission table; a scorecard built without one
// (New on checks alone) lists every pair as not assessed.
func (s *Scorecard) admissionRows() []AdmissionRow {
	if s.Admission == nil {
		return AdmissionTable(nil)
	}
	return s.Admission
}

// admissionRowOf finds one pair of the table.
func admissionRowOf(rows []AdmissionRow, backend string, req Requirement) *AdmissionRow {
	for i := range rows {
		if rows[i].Backend == backend && rows[i].Requirement == req {
			return &rows[i]
		}
	}
	return nil
}

// admissionAxes lists the table's requirements and backends in order.
func admissionAxes(rows []AdmissionRow) (backends []string, reqs []Requirement) {
	for _, r := range rows {
		if !slices.Contains(backends, r.Backend) {
			backends = append(backends, r.Backend)
		}
		if !slices.Contains(reqs, r.Requirement) {
			reqs = append(reqs, r.Requirement)
		}
	}
	return backends, reqs
}

// AdmissionLines are the one-liners under the gate: a header, one line per
// backend with its tally, and the requirements a refused backend failed.
// A refused client is called out (the decision documented in admission.go)
// but the gate's verdict and exit code do not change.
func (s *Scorecard) AdmissionLines() []string {
	s2 := *s
	s2.Admission = s.admissionRows()
	backends, tallies := s2.AdmissionTallies()
	lines := []string{"client admission (raw clients; next to the gate, not part of it):"}
	for _, b := range backends {
		t := tallies[b]
		line := fmt.Sprintf("  %-10s %d admitted, %d only with impl's wrapper, %d refused, %d not assessed", b, t.Admitted, t.Wrapper, t.Refused, t.NotAssessed)
		if t.Refused > 0 {
			var names []string
			for _, r := range t.RefusedFor {
				names = append(names, string(r))
			}
			line += " — CLIENT REFUSED for " + strings.Join(names, ", ")
		}
		lines = append(lines, line)
	}
	return lines
}

// AdmissionRefused reports whether any backend was refused a requirement.
func (s *Scorecard) AdmissionRefused() bool {
	for _, r := range s.admissionRows() {
		if r.Verdict == Refused {
			return true
		}
	}
	return false
}

// writeAdmissionTerminal writes the one-liners after the gate's reasons.
func writeAdmissionTerminal(b *bufio.Writer, s *Scorecard, paint func(code, text string) string) {
	fmt.Fprintln(b)
	for i, line := range s.AdmissionLines() {
		code := ansiDim
		switch {
		case strings.Contains(line, "CLIENT REFUSED"):
			code = ansiBold + ansiAmber
		case i == 0:
			code = ""
		}
		fmt.Fprintln(b, paint(code, line))
	}
}

// writeAdmissionMarkdown writes the admission section: requirement ×
// backend, each cell the verdict and the wrapper it needs.
func writeAdmissionMarkdown(b *bufio.Writer, s *Scorecard) {
	rows := s.admissionRows()
	backends, reqs := admissionAxes(rows)
	fmt.Fprintf(b, "\n### Client admission (raw clients, not part of the gate)\n\n")
	fmt.Fprintf(b, "| Requirement |")
	for _, be := range backends {
		fmt.Fprintf(b, " %s |", mdText(be))
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", len(backends)))
	for _, req := range reqs {
		fmt.Fprintf(b, "| %s `%s` |", mdText(requirementTitle(req)), req)
		for _, be := range backends {
			r := admissionRowOf(rows, be, req)
			text := "– not assessed"
			if r != nil {
				switch r.Verdict {
				case Admitted:
					text = "✓ admitted"
				case AdmittedWithWrapper:
					text = "✓ with `" + mdText(r.Wrapper) + "`"
				case Refused:
					text = "**✗ REFUSED**"
				}
			}
			fmt.Fprintf(b, " %s |", text)
		}
		fmt.Fprintln(b)
	}
	for _, line := range s.AdmissionLines()[1:] {
		if strings.Contains(line, "CLIENT REFUSED") {
			fmt.Fprintf(b, "\n**%s**\n", mdText(strings.TrimSpace(line)))
		}
	}
}

//go:embed admission.html.tmpl
var admissionHTMLSource string

// The admission section is its own template, parsed into the report's set:
// report.html.tmpl only calls {{template "admission" .Admission}}.
func init() {
	template.Must(htmlTemplate.New("admission").Parse(admissionHTMLSource))
}

// htmlAdmission is the admission section's view.
type htmlAdmission struct {
	Backends []string
	Rows     []htmlAdmissionRow
	Lines    []htmlAdmissionLine
	Entries  []htmlAdmissionEntry
}

type htmlAdmissionLine struct {
	Text    string
	Refused bool
}

type htmlAdmissionRow struct {
	Requirement RequirementInfo
	Cells       []htmlAdmissionCell
}

type htmlAdmissionCell struct {
	Class, Label, Wrapper, Evidence, Anchor string
}

type htmlAdmissionEntry struct {
	Admission
	ID, Class, Label, Title string
}

func admissionClass(v AdmissionVerdict) string {
	switch v {
	case Admitted:
		return "pass"
	case AdmittedWithWrapper:
		return "wrapped"
	case Refused:
		return "fail"
	}
	return "not-run"
}

func newHTMLAdmission(s *Scorecard) htmlAdmission {
	rows := s.admissionRows()
	backends, reqs := admissionAxes(rows)
	v := htmlAdmission{Backends: backends}
	for _, l := range s.AdmissionLines()[1:] {
		v.Lines = append(v.Lines, htmlAdmissionLine{Text: strings.TrimSpace(l), Refused: strings.Contains(l, "CLIENT REFUSED")})
	}
	for _, req := range reqs {
		info := RequirementInfo{ID: req, Title: requirementTitle(req)}
		for _, r := range Requirements {
			if r.ID == req {
				info = r
			}
		}
		hr := htmlAdmissionRow{Requirement: info}
		for _, be := range backends {
			cell := htmlAdmissionCell{Class: "not-run", Label: "not assessed"}
			if r := admissionRowOf(rows, be, req); r != nil {
				cell.Class, cell.Label, cell.Wrapper = admissionClass(r.Verdict), admissionLabel(r.Verdict), r.Wrapper
				if len(r.Entries) > 0 {
					cell.Evidence = r.Entries[0].Evidence
				}
				for i, e := range r.Entries {
					id := fmt.Sprintf("admission-%s-%s-%d", be, req, i+1)
					if i == 0 {
						cell.Anchor = id
					}
					v.Entries = append(v.Entries, htmlAdmissionEntry{Admission: e, ID: id, Class: admissionClass(e.Verdict), Label: admissionLabel(e.Verdict), Title: info.Title})
				}
			}
			hr.Cells = append(hr.Cells, cell)
		}
		v.Rows = append(v.Rows, hr)
	}
	return v
}
