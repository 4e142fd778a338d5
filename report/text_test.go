package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func TestMarkdown(t *testing.T) {
	s := SampleScorecard()
	var buf bytes.Buffer
	if err := report.WriteMarkdown(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"## slotgate: FAIL — 1 fail, 3 blind, 1 not run of 16 requested cells",
		"| Row | Errors | Silently wrong |",
		"| Fencing scripts `fencing-scripts` | ✓ pass (1) | **? BLIND** (1) |",
		"| Presence MGET `presence-mget` | – not run | ✓ pass (1) |",
		"- fencing-scripts/silently-wrong: blind — control M1 not caught",
		"- **Seed:** 1337",
		// The fixture scores 8 rows; every other catalogue row is "other"
		// (counted, so a new row does not break this test).
		fmt.Sprintf("%d other rows of the catalogue not run and not gated", len(report.Catalogue)-8),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	c := passing(report.RowRouting, report.ColumnErrors)
	c.Status, c.Message = report.StatusFail, "a | b <br>"
	var buf bytes.Buffer
	if err := report.WriteMarkdown(&buf, report.New(report.Meta{}, []report.Check{c})); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, `a \| b &lt;br&gt;`) {
		t.Errorf("message not escaped:\n%s", out)
	}
}

func TestTerminal(t *testing.T) {
	var plain, colored bytes.Buffer
	if err := report.WriteTerminal(&plain, SampleScorecard(), false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteTerminal(&colored, SampleScorecard(), true); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes without color")
	}
	if !strings.Contains(colored.String(), "\x1b[") {
		t.Error("no colour codes with color")
	}
	lines := strings.Split(out, "\n")
	header := lines[0]
	col := strings.Index(header, "SILENTLY WRONG")
	for _, l := range lines[1:9] {
		if len(l) < col || l[col-2:col] != "  " {
			t.Errorf("row not aligned under the header:\n%s\n%s", header, l)
		}
	}
	for _, want := range []string{
		"fencing-scripts    pass 1       BLIND 1",
		"BLIND 1",
		"presence-mget      NOT RUN      pass 1",
		"gate FAIL — 1 fail, 3 blind, 1 not run of 16 requested cells",
		"  fencing-migration/silently-wrong: fail — ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
}
