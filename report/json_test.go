package report_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func TestJSONRoundTrip(t *testing.T) {
	in := SampleScorecard()
	in.Problems = []string{"AfterSuite failed: cleanup"}
	in.Unscored = append(in.Unscored, passing("typo-row", report.ColumnErrors))
	var first bytes.Buffer
	if err := report.WriteJSON(&first, in); err != nil {
		t.Fatal(err)
	}
	out, err := report.ReadJSON(bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var second bytes.Buffer
	if err := report.WriteJSON(&second, out); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Errorf("round trip changed the results file:\n%s\n---\n%s", first.String(), second.String())
	}
	p1, r1 := in.Gate()
	p2, r2 := out.Gate()
	if p1 != p2 || !slices.Equal(r1, r2) {
		t.Errorf("gate changed: %v %q → %v %q", p1, r1, p2, r2)
	}
	if !out.Meta.StartedAt.Equal(in.Meta.StartedAt) || out.Meta.Duration != in.Meta.Duration {
		t.Errorf("meta changed: %+v", out.Meta)
	}
	c := out.Cell(report.RowFencingMigration, report.ColumnSilentlyWrong)
	if len(c.Checks) != 1 || len(c.Checks[0].Evidence.Faults) != 2 || c.Checks[0].Evidence.Timings["rollback apply"] != ms(830) {
		t.Errorf("evidence lost: %+v", c.Checks)
	}
}

func TestReadJSONRefoldsStatus(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, SampleScorecard()); err != nil {
		t.Fatal(err)
	}
	// A results file edited to claim the blind cell passed still reads blind.
	edited := strings.Replace(buf.String(), `"status": "blind"`, `"status": "pass"`, -1)
	s, err := report.ReadJSON(strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Cell(report.RowFencingScripts, report.ColumnSilentlyWrong).Status; got != report.StatusBlind {
		t.Errorf("status = %s, want blind", got)
	}
}

func TestReadJSONRejectsOtherSchemas(t *testing.T) {
	_, err := report.ReadJSON(strings.NewReader(`{"schema": "something/v9"}`))
	if !errors.Is(err, report.ErrSchema) {
		t.Errorf("err = %v, want ErrSchema", err)
	}
}
