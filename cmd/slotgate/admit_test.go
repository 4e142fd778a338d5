package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func column(pin, backend string, verdicts ...report.AdmissionVerdict) AdmitRelease {
	r := AdmitRelease{Pin: pin, Backend: backend}
	for i, v := range verdicts {
		r.Cells = append(r.Cells, AdmitCell{Requirement: report.Requirements[i].ID, Verdict: v})
	}
	return r
}

// A requirement a later release meets worse than an earlier one of the same
// library is a regression, and so is one the later release left not
// assessed (nothing admits it there); not assessed on the earlier release
// compares with nothing, and another library's column is never compared.
func TestAdmitRegressions(t *testing.T) {
	rels := []AdmitRelease{
		column("go-redis@v9.17.3", "go-redis", report.Admitted, report.AdmittedWithWrapper, report.NotAssessed, report.Refused),
		column("valkey-go@v1.0.79", "valkey-go", report.Refused, report.Refused, report.Refused, report.Refused),
		column("go-redis@v9.23.0", "go-redis", report.AdmittedWithWrapper, report.Admitted, report.Refused, report.NotAssessed),
	}
	got := regressions(rels)
	if len(got) != 2 || !strings.HasPrefix(got[0], string(report.Requirements[0].ID)+": go-redis@v9.17.3 admitted, go-redis@v9.23.0 wrapper") ||
		!strings.HasPrefix(got[1], string(report.Requirements[3].ID)+": go-redis@v9.17.3 refused, go-redis@v9.23.0 not-assessed") {
		t.Errorf("regressions: %q", got)
	}
}

// fill takes the pinned backend's verdicts, its linked version and a replay
// command; admission.html and admission.json render them.
func TestAdmitMatrixFromARun(t *testing.T) {
	card := &report.Scorecard{Meta: report.Meta{Clients: []string{"go-redis v9.17.3", "valkey-go v1.0.79"}},
		Admission: []report.AdmissionRow{
			{Backend: "go-redis", Requirement: report.RequirementProtocol, Verdict: report.Refused, Entries: []report.Admission{{Evidence: "raw pool spoke RESP2", Path: "go-redis ClusterClient", Seed: 42}}},
			{Backend: "valkey-go", Requirement: report.RequirementProtocol, Verdict: report.Admitted},
		}}
	var rel AdmitRelease
	pin := clientPin{Name: "go-redis", Module: clientLibraries["go-redis"], Version: "v9.17.3"}
	rel.fill(card, pin, plan{runFlags: runFlags{profile: "smoke"}})
	if rel.Linked != "go-redis v9.17.3" {
		t.Errorf("linked %q", rel.Linked)
	}
	var got AdmitCell
	for _, c := range rel.Cells {
		if c.Requirement == report.RequirementProtocol {
			got = c
		}
	}
	if got.Verdict != report.Refused || got.Seed != 42 || !strings.Contains(got.Replay, "--client go-redis@v9.17.3") || !strings.Contains(got.Replay, "--seed 42") {
		t.Errorf("cell %+v", got)
	}
	dir := t.TempDir()
	if err := writeAdmission(dir, AdmitMatrix{Profile: "smoke", Seed: 42, Requirements: report.Requirements, Releases: []AdmitRelease{rel}}); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "admission.html"))
	for _, want := range []string{"go-redis@v9.17.3", "raw pool spoke RESP2", "go-redis ClusterClient", "refused"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("admission.html lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "admission.json")); err != nil {
		t.Error(err)
	}
}
