package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiAmber = "\x1b[33m"
)

// WriteTerminal writes the compact scorecard printed at the end of a run:
// one line per requested or run row with both columns, the gate line, and
// the reasons. color adds ANSI colours (pass green, fail red, blind amber).
func WriteTerminal(w io.Writer, s *Scorecard, color bool) error {
	b := bufio.NewWriter(w)
	paint := func(code, text string) string {
		if !color || code == "" {
			return text
		}
		return code + text + ansiReset
	}
	width := len("ROW")
	for _, r := range s.Rows {
		if s.listed(r.ID) {
			width = max(width, len(r.ID))
		}
	}
	const colWidth = len("INTERRUPTED") // the widest word, as len("NOT RUN")+4 was
	head := fmt.Sprintf("%s  %s  %s", pad("ROW", width), pad("ERRORS", colWidth), "SILENTLY WRONG")
	if s.Meta.Timing != nil {
		head += "  TIME"
	}
	fmt.Fprintln(b, head)
	for _, row := range s.Rows {
		requested := s.IsRequested(row.ID)
		if !s.listed(row.ID) {
			continue
		}
		line := pad(string(row.ID), width)
		for i, col := range Columns {
			c := s.Cell(row.ID, col)
			text := termStatus(c, requested)
			if s.cellInterrupted(c) {
				text = "INTERRUPTED"
			}
			if i < len(Columns)-1 {
				text = pad(text, colWidth)
			} else if s.Meta.Timing != nil { // the TIME column follows
				text = pad(text, len("SILENTLY WRONG"))
			}
			line += "  " + paint(termColor(c.Status, requested), text)
		}
		if d := s.Meta.Timing.rowTime(row.ID); d != "" {
			line += paint(ansiDim, "  "+d)
		} else if s.Meta.Timing != nil {
			line += "  -"
		}
		switch reason := s.Meta.NotRun[row.ID]; {
		case reason != "" && !s.hasChecks(row.ID):
			line += paint(ansiDim, "  (not run: "+reason+")")
		case !requested:
			line += paint(ansiDim, "  (not requested)")
		}
		fmt.Fprintln(b, strings.TrimRight(line, " "))
	}
	if n := s.unlisted(); n > 0 {
		fmt.Fprintln(b, paint(ansiDim, fmt.Sprintf("(%s not run, not gated)", plural(n, "other row"))))
	}
	if line := s.Meta.timeLine(); line != "" {
		fmt.Fprintln(b, paint(ansiDim, "time: "+line))
		for _, sc := range s.Meta.Timing.slowest(3) {
			name, _, _ := strings.Cut(sc.Scenario, " — ") // the spec's description follows
			name, _, _ = strings.Cut(name, " [")          // and its labels
			fmt.Fprintln(b, paint(ansiDim, fmt.Sprintf("  %8s  %s", formatDuration(sc.Duration), oneLine(name, 100))))
		}
	}
	pass, reasons := s.Gate()
	code := ansiBold + ansiGreen
	if !pass {
		code = ansiBold + ansiRed
	}
	fmt.Fprintf(b, "\n%s\n", paint(code, "gate "+s.headline()))
	for _, r := range reasons {
		fmt.Fprintf(b, "  %s\n", r)
	}
	writeAdmissionTerminal(b, s, paint)
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write terminal scorecard: %w", err)
	}
	return nil
}

func termStatus(c *Cell, requested bool) string {
	if c.Status == StatusNotRun {
		if requested {
			return "NOT RUN"
		}
		return "-"
	}
	word := string(c.Status)
	if c.Status != StatusPass {
		word = strings.ToUpper(word)
	}
	return fmt.Sprintf("%s %d", word, len(c.Checks))
}

func termColor(st Status, requested bool) string {
	switch st {
	case StatusPass:
		return ansiGreen
	case StatusFail:
		return ansiBold + ansiRed
	case StatusBlind, StatusInconclusive, StatusPartial:
		return ansiBold + ansiAmber
	}
	if requested {
		return ansiBold + ansiRed // a requested cell nobody scored fails the gate
	}
	return ansiDim
}

// pad right-pads s to n runes.
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
