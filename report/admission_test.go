package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/slotgate/slotgate/report"
)

func admissionEntry(a report.Admission) types.ReportEntry {
	return types.ReportEntry{Name: report.AdmissionEntryName, Value: types.WrapEntryValue(a)}
}

func rowOf(t *testing.T, s *report.Scorecard, backend string, req report.Requirement) report.AdmissionRow {
	t.Helper()
	for _, r := range s.Admission {
		if r.Backend == backend && r.Requirement == req {
			return r
		}
	}
	t.Fatalf("no admission row %s/%s in %+v", backend, req, s.Admission)
	return report.AdmissionRow{}
}

func TestAdmissionOf(t *testing.T) {
	for _, c := range []struct {
		raw, wrapped bool
		want         report.AdmissionVerdict
	}{
		{true, true, report.Admitted},
		{true, false, report.Admitted}, // the raw client met it; a broken wrapper is the gate's business
		{false, true, report.AdmittedWithWrapper},
		{false, false, report.Refused},
	} {
		if got := report.AdmissionOf(c.raw, c.wrapped); got != c.want {
			t.Errorf("AdmissionOf(%v, %v) = %s, want %s", c.raw, c.wrapped, got, c.want)
		}
	}
}

func TestAdmissionTableEveryPairWorstFirst(t *testing.T) {
	rows := report.AdmissionTable([]report.Admission{
		{Backend: "go-redis", Requirement: report.RequirementRedirects, Verdict: report.Admitted, Scenario: "a"},
		{Backend: "go-redis", Requirement: report.RequirementRedirects, Verdict: report.AdmittedWithWrapper, Wrapper: "impl/routing.Wrap", Scenario: "b"},
		{Backend: "valkey-go", Requirement: report.RequirementCrossSlot, Verdict: report.Refused, Scenario: "c"},
		{Backend: "valkey-go", Requirement: report.RequirementCrossSlot, Verdict: report.Admitted, Scenario: "d"},
		{Backend: "valkey-go", Requirement: report.RequirementProtocol, Verdict: report.NotAssessed, Evidence: "too little traffic"},
	})
	if got, want := len(rows), len(report.AdmissionBackends)*len(report.Requirements); got != want {
		t.Fatalf("%d rows, want every backend × requirement = %d", got, want)
	}
	s := &report.Scorecard{Admission: rows}
	if r := rowOf(t, s, "go-redis", report.RequirementRedirects); r.Verdict != report.AdmittedWithWrapper || r.Wrapper != "impl/routing.Wrap" || len(r.Entries) != 2 {
		t.Errorf("a raw failure in one run outweighs an admission in another: %+v", r)
	}
	if r := rowOf(t, s, "valkey-go", report.RequirementCrossSlot); r.Verdict != report.Refused {
		t.Errorf("refused must win: %+v", r)
	}
	if r := rowOf(t, s, "valkey-go", report.RequirementProtocol); r.Verdict != report.NotAssessed || len(r.Entries) != 1 {
		t.Errorf("a recorded not-assessed stays not assessed: %+v", r)
	}
	if r := rowOf(t, s, "go-redis", report.RequirementReplicaRepair); r.Verdict != report.NotAssessed || len(r.Entries) != 0 {
		t.Errorf("a missing entry reads not assessed, never admitted: %+v", r)
	}
}

func TestFromGinkgoCollectsAdmission(t *testing.T) {
	passed := spec("redirects", types.SpecStatePassed, []string{"routing", "errors"},
		entry(report.Check{Scenario: "routing/redirects/go-redis", Status: report.StatusPass, Controls: []report.Control{ok}}),
		admissionEntry(report.Admission{Backend: "go-redis", Requirement: report.RequirementRedirects, Verdict: report.AdmittedWithWrapper, Wrapper: "impl/routing.Wrap", Evidence: "raw pool handed back 3 ASK"}))
	interrupted := spec("failover", types.SpecStateInterrupted, []string{"failure-drills", "errors"},
		admissionEntry(report.Admission{Backend: "valkey-go", Requirement: report.RequirementDispatchHalt, Verdict: report.Admitted}))
	s, err := report.FromGinkgo(decoded(t, []types.Report{{SuiteDescription: "x", SpecReports: types.SpecReports{passed, interrupted}}}), report.Meta{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(t, s, "go-redis", report.RequirementRedirects)
	if r.Verdict != report.AdmittedWithWrapper || len(r.Entries) != 1 || r.Entries[0].Seed != 7 || r.Entries[0].Scenario != "redirects" {
		t.Errorf("collected row: %+v", r)
	}
	if r := rowOf(t, s, "valkey-go", report.RequirementDispatchHalt); r.Verdict != report.NotAssessed {
		t.Errorf("an interrupted spec judged no client: %+v", r)
	}
}

// refusedCard is a passing gate with a refused client.
func refusedCard() *report.Scorecard {
	s := report.New(report.Meta{Rows: []report.RowID{report.RowAxioms}}, []report.Check{
		{Row: report.RowAxioms, Column: report.ColumnErrors, Scenario: "axioms/a", Status: report.StatusPass, Controls: []report.Control{ok}},
		{Row: report.RowAxioms, Column: report.ColumnSilentlyWrong, Scenario: "axioms/b", Status: report.StatusPass, Controls: []report.Control{ok}},
	})
	s.Admission = report.AdmissionTable([]report.Admission{
		{Backend: "go-redis", Requirement: report.RequirementDispatchHalt, Verdict: report.AdmittedWithWrapper, Wrapper: "impl/client reloadOnNodeFailure", Evidence: "raw halt 31 s"},
		{Backend: "valkey-go", Requirement: report.RequirementCrossSlot, Verdict: report.Refused, Evidence: "silently <scattered>", Path: "valkey-go Client.Do (MGET over many slots)"},
		{Backend: "valkey-go", Requirement: report.RequirementRedirects, Verdict: report.Admitted},
	})
	return s
}

func TestAdmissionDoesNotChangeTheGate(t *testing.T) {
	s := refusedCard()
	pass, reasons := s.Gate()
	if !pass {
		t.Fatalf("a refused client changed the gate: %v", reasons)
	}
	if !s.AdmissionRefused() {
		t.Fatal("refused not reported")
	}
}

func TestAdmissionJSONRoundTripAndMerge(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, refusedCard()); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var rows []report.AdmissionRow
	if err := json.Unmarshal(raw["admission"], &rows); err != nil {
		t.Fatalf("results.json admission: %v", err)
	}
	if len(rows) != len(report.AdmissionBackends)*len(report.Requirements) {
		t.Errorf("results.json has %d admission rows", len(rows))
	}
	back, err := report.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, back, "valkey-go", report.RequirementCrossSlot); r.Verdict != report.Refused {
		t.Errorf("after a round trip: %+v", r)
	}

	// A plain scorecard (New) still writes the whole table, not assessed.
	buf.Reset()
	if err := report.WriteJSON(&buf, report.New(report.Meta{}, nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"verdict": "not-assessed"`) {
		t.Error("a scorecard without admission entries must list every pair as not assessed")
	}

	// Merge carries every shard's rows.
	a := report.New(report.Meta{Shard: &report.Shard{Index: 1, Of: 2}}, nil)
	a.Admission = report.AdmissionTable([]report.Admission{{Backend: "go-redis", Requirement: report.RequirementRedirects, Verdict: report.Admitted}})
	b := report.New(report.Meta{Shard: &report.Shard{Index: 2, Of: 2}}, nil)
	b.Admission = report.AdmissionTable([]report.Admission{
		{Backend: "go-redis", Requirement: report.RequirementRedirects, Verdict: report.AdmittedWithWrapper, Wrapper: "w"},
		{Backend: "valkey-go", Requirement: report.RequirementProtocol, Verdict: report.Admitted},
	})
	m, err := report.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, m, "go-redis", report.RequirementRedirects); r.Verdict != report.AdmittedWithWrapper || len(r.Entries) != 2 {
		t.Errorf("merged redirects: %+v", r)
	}
	if r := rowOf(t, m, "valkey-go", report.RequirementProtocol); r.Verdict != report.Admitted {
		t.Errorf("merged protocol: %+v", r)
	}
}

func TestAdmissionRenderers(t *testing.T) {
	s := refusedCard()
	var term, md, html bytes.Buffer
	if err := report.WriteTerminal(&term, s, false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client admission", "go-redis", "1 only with impl's wrapper", "CLIENT REFUSED for cross-slot"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	for _, want := range []string{"### Client admission", "| Dispatch halt `dispatch-halt` | ✓ with `impl/client reloadOnNodeFailure` | – not assessed |", "**✗ REFUSED**", "CLIENT REFUSED"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	h := html.String()
	for _, want := range []string{`id="admission"`, "Cross-slot multi-key", "REFUSED", "impl/client reloadOnNodeFailure", "silently &lt;scattered&gt;", "valkey-go Client.Do (MGET over many slots)", "<i>not named</i>"} {
		if !strings.Contains(h, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// The gate's headline is the implementation's: the admission section
	// comes after it.
	if strings.Index(term.String(), "gate ") > strings.Index(term.String(), "client admission") {
		t.Error("admission lines must follow the gate line")
	}
}

// TestAdmissionOnlyFromATrustedRun: an admission recorded in a spec whose
// check is blind, inconclusive or failed is not assessed; a refusal stands.
func TestAdmissionOnlyFromATrustedRun(t *testing.T) {
	notExercised := report.Control{Name: "M2", Kind: report.ControlVariant, Why: "mutant", Exercised: false}
	admit := func(b string, v report.AdmissionVerdict) types.ReportEntry {
		return admissionEntry(report.Admission{Backend: b, Requirement: report.RequirementRedirects, Verdict: v, Wrapper: "w", Evidence: "raw run."})
	}
	for _, c := range []struct {
		name  string
		check report.Check
		state types.SpecState
	}{
		{"blind: no variant exercised", report.Check{Status: report.StatusPass, Controls: []report.Control{notExercised}}, types.SpecStateFailed},
		{"inconclusive", report.Check{Status: report.StatusInconclusive, Message: "fault unconfirmed", Controls: []report.Control{ok}}, types.SpecStatePassed},
		{"failed", report.Check{Status: report.StatusFail, Message: "lost writes", Controls: []report.Control{ok}}, types.SpecStateFailed},
		{"unknown", report.Check{Status: report.StatusUnknown, Message: "too little traffic", Controls: []report.Control{ok}}, types.SpecStateFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := spec("redirects", c.state, []string{"routing", "errors"}, entry(c.check),
				admit("go-redis", report.Admitted), admit("valkey-go", report.AdmittedWithWrapper))
			s, err := report.FromGinkgo(decoded(t, []types.Report{{SuiteDescription: "x", SpecReports: types.SpecReports{sp}}}), report.Meta{})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range []string{"go-redis", "valkey-go"} {
				r := rowOf(t, s, b, report.RequirementRedirects)
				if r.Verdict != report.NotAssessed || len(r.Entries) != 1 || r.Entries[0].Wrapper != "" || !strings.Contains(r.Entries[0].Evidence, "not assessed: the same run's check") {
					t.Errorf("%s: an admission on an untrusted run must be not assessed, with the reason: %+v", b, r)
				}
			}
		})
	}

	// A refusal on an untrusted run stands; an admission with no check at
	// all is not assessed; a passing check keeps its admissions.
	refused := admissionEntry(report.Admission{Backend: "go-redis", Requirement: report.RequirementCrossSlot, Verdict: report.Refused})
	lone := admissionEntry(report.Admission{Backend: "valkey-go", Requirement: report.RequirementProtocol, Verdict: report.Admitted})
	failed := spec("fail", types.SpecStateFailed, []string{"presence-mget", "errors"},
		entry(report.Check{Status: report.StatusFail, Controls: []report.Control{ok}}), refused)
	unchecked := spec("alone", types.SpecStatePassed, []string{"protocol", "errors"}, lone)
	passed := spec("pass", types.SpecStatePassed, []string{"routing", "errors"},
		entry(report.Check{Status: report.StatusPass, Controls: []report.Control{ok}}), admit("go-redis", report.Admitted))
	s, err := report.FromGinkgo(decoded(t, []types.Report{{SuiteDescription: "x", SpecReports: types.SpecReports{failed, unchecked, passed}}}), report.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, s, "go-redis", report.RequirementCrossSlot); r.Verdict != report.Refused {
		t.Errorf("a refusal stands whatever the run: %+v", r)
	}
	if r := rowOf(t, s, "valkey-go", report.RequirementProtocol); r.Verdict != report.NotAssessed {
		t.Errorf("an admission without a check in its spec: %+v", r)
	}
	if r := rowOf(t, s, "go-redis", report.RequirementRedirects); r.Verdict != report.Admitted {
		t.Errorf("a passing check keeps its admission: %+v", r)
	}
}
