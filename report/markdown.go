package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteMarkdown writes a short summary for a PR comment or CI job page: the
// gate verdict, the rows × columns table, why each failing or blind cell
// is so, then the run meta. report.html has the evidence.
func WriteMarkdown(w io.Writer, s *Scorecard) error {
	b := bufio.NewWriter(w)
	pass, reasons := s.Gate()
	fmt.Fprintf(b, "## slotgate: %s\n\n", mdText(s.headline()))
	fmt.Fprintf(b, "| Row | Errors | Silently wrong |\n|---|---|---|\n")
	for _, row := range s.Rows {
		requested := s.IsRequested(row.ID)
		if !s.listed(row.ID) {
			continue
		}
		name := fmt.Sprintf("%s `%s`", mdText(row.Title), row.ID)
		switch reason := s.Meta.NotRun[row.ID]; {
		case reason != "" && !s.hasChecks(row.ID):
			name += " (not run: " + mdText(reason) + ")"
		case !requested:
			name += " (not requested)"
		}
		fmt.Fprintf(b, "| %s |", name)
		for _, col := range Columns {
			c := s.Cell(row.ID, col)
			status := mdStatus(c)
			if s.cellInterrupted(c) {
				status = "– interrupted"
			}
			fmt.Fprintf(b, " %s |", status)
		}
		fmt.Fprintln(b)
	}
	if skipped := s.unlisted(); skipped > 0 {
		fmt.Fprintf(b, "\n%s of the catalogue not run and not gated.\n", plural(skipped, "other row"))
	}
	if !pass {
		fmt.Fprintf(b, "\n### Why the gate failed\n\n")
		for _, r := range reasons {
			fmt.Fprintf(b, "- %s\n", mdText(r))
		}
	}
	writeAdmissionMarkdown(b, s)
	fmt.Fprintf(b, "\n### Run\n\n")
	for _, kv := range metaLines(s) {
		fmt.Fprintf(b, "- **%s:** %s\n", kv[0], mdText(kv[1]))
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// mdStatus is a cell as text symbols, no emoji: "✓ pass (3)".
func mdStatus(c *Cell) string {
	n := len(c.Checks)
	switch c.Status {
	case StatusPass:
		return fmt.Sprintf("✓ pass (%d)", n)
	case StatusFail:
		return fmt.Sprintf("**✗ FAIL** (%d)", n)
	case StatusBlind:
		return fmt.Sprintf("**? BLIND** (%d)", n)
	case StatusInconclusive:
		return fmt.Sprintf("**~ INCONCLUSIVE** (%d)", n)
	case StatusPartial:
		return fmt.Sprintf("◐ partial (%d)", n)
	}
	return "– not run"
}

// mdText makes s safe inside a Markdown table or list item.
var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ", "\r", "")

func mdText(s string) string { return mdReplacer.Replace(s) }

// hasChecks reports whether any cell of row holds a check.
func (s *Scorecard) hasChecks(row RowID) bool {
	for _, col := range Columns {
		if c := s.Cell(row, col); c != nil && len(c.Checks) > 0 {
			return true
		}
	}
	return false
}

// unlisted counts rows neither run nor requested (so not gated) and with no
// recorded reason for not running, which the compact renderers name or
// count instead of drawing.
func (s *Scorecard) unlisted() int {
	n := 0
	for _, r := range s.Rows {
		if !s.listed(r.ID) {
			n++
		}
	}
	return n
}

// listed reports whether the renderers draw row: it is requested, it has
// checks, or the run recorded why it did not run (Meta.NotRun).
func (s *Scorecard) listed(row RowID) bool {
	return s.IsRequested(row) || s.hasChecks(row) || s.Meta.NotRun[row] != ""
}

// metaLines are the run facts as label/value pairs, in reading order.
func metaLines(s *Scorecard) [][2]string {
	m := s.Meta
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("Profile", m.Profile)
	add("Seed", fmt.Sprint(m.Seed))
	rows := "all"
	if len(m.Rows) > 0 {
		rows = joinIDs(m.Rows)
	}
	add("Rows", rows)
	add("Topology", strings.Join(s.Topologies(), ", "))
	add("Server", strings.Join(m.Servers, ", "))
	add("Client", strings.Join(m.Clients, ", "))
	if m.Duration != 0 {
		add("Duration", formatDuration(m.Duration))
	}
	add("Time", m.timeLine())
	if !m.StartedAt.IsZero() {
		add("Started", m.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add("Provider", m.Provider)
	version := m.Version
	if m.GoVersion != "" {
		version = strings.TrimSpace(version + " (" + m.GoVersion + ")")
	}
	add("slotgate", version)
	add("Host", m.Host)
	add("Command", m.CommandLine)
	return out
}

func joinIDs(ids []RowID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// clock renders t as a UTC time of day, for fault windows.
func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("15:04:05.000")
}
