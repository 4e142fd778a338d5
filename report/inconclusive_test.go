package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func inconclusive() report.Check {
	c := chk(report.StatusInconclusive) // no control needed: it is not a pass
	c.Scenario = "fencing-scripts/drill"
	c.Message = "fault node/failover-graceful not confirmed (wait for p0r0 to take over shard 0: context deadline exceeded)"
	return c
}

func TestInconclusiveFold(t *testing.T) {
	inc, pass := inconclusive(), chk(report.StatusPass, ok)
	if v := inc.Verdict(); v != report.StatusInconclusive {
		t.Errorf("Verdict() = %s, want inconclusive", v)
	}
	withControls := inc
	withControls.Controls = []report.Control{miss}
	if v := withControls.Verdict(); v != report.StatusInconclusive {
		t.Errorf("an uncaught control does not turn inconclusive into blind: %s", v)
	}
	for _, tc := range []struct {
		name   string
		checks []report.Check
		want   report.Status
	}{
		{"inconclusive beats pass", []report.Check{pass, inc}, report.StatusInconclusive},
		{"inconclusive beats blind", []report.Check{chk(report.StatusPass, miss), inc}, report.StatusInconclusive},
		{"fail beats inconclusive", []report.Check{inc, chk(report.StatusFail, ok)}, report.StatusFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := report.New(report.Meta{}, tc.checks)
			if c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong); c.Status != tc.want {
				t.Errorf("cell = %s, want %s (%q)", c.Status, tc.want, c.Summary)
			}
		})
	}

	s := report.New(report.Meta{}, []report.Check{pass, inc})
	c := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong)
	if !strings.HasPrefix(c.Summary, "inconclusive: fault node/failover-graceful not confirmed (wait for p0r0") || !strings.Contains(c.Summary, "harness") {
		t.Errorf("summary = %q, want it to name the fault and the harness", c.Summary)
	}
	gate, reasons := s.Gate()
	if gate || len(reasons) != 2 || !strings.Contains(reasons[0]+reasons[1], "silently-wrong: inconclusive — inconclusive: fault") {
		t.Errorf("gate = %v %q: an inconclusive cell must fail it, named", gate, reasons)
	}
	if tl := s.Tally(); tl.Inconclusive != 1 || tl.Total() != 2 {
		t.Errorf("tally = %+v", tl)
	}
	if h := s.Headline(); !strings.Contains(h, "1 inconclusive") || strings.Contains(h, "run problem") {
		t.Errorf("headline = %q", h)
	}

	var term, md, junit, html bytes.Buffer
	for name, err := range map[string]error{
		"terminal": report.WriteTerminal(&term, s, false),
		"markdown": report.WriteMarkdown(&md, s),
		"junit":    report.WriteJUnit(&junit, s),
		"html":     report.WriteHTML(&html, s),
	} {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, out := range map[string]string{"terminal": term.String(), "markdown": md.String(), "html": html.String()} {
		if !strings.Contains(strings.ToLower(out), "inconclusive") {
			t.Errorf("%s does not show the inconclusive cell:\n%s", name, out)
		}
	}
	if !strings.Contains(junit.String(), `type="inconclusive"`) {
		t.Errorf("junit has no inconclusive failure:\n%s", junit.String())
	}
}
