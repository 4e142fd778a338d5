package report_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func renderHTML(t *testing.T, s *report.Scorecard) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestHTMLIsOneSelfContainedDocument(t *testing.T) {
	out := renderHTML(t, SampleScorecard())
	if !strings.HasPrefix(out, "<!doctype html>") {
		t.Errorf("does not start with a doctype: %.40q", out)
	}
	for _, tag := range []string{"<html", "</html>", "<body", "</body>", "<style>", "<script>"} {
		if n := strings.Count(out, tag); n != 1 {
			t.Errorf("%s appears %d times, want 1", tag, n)
		}
	}
	lower := strings.ToLower(out)
	for _, ref := range []string{"src=", `href="http`, "href='http", "@import", "url(", "<link"} {
		if strings.Contains(lower, ref) {
			t.Errorf("external reference %q in the report", ref)
		}
	}
	// Every in-page link lands on an element of the page.
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(out, -1) {
		if !strings.Contains(out, `id="`+m[1]+`"`) {
			t.Errorf("link #%s has no target", m[1])
		}
	}
}

func TestHTMLShowsEveryRow(t *testing.T) {
	out := renderHTML(t, SampleScorecard())
	for _, r := range report.Catalogue {
		if !strings.Contains(out, string(r.ID)) {
			t.Errorf("row %s missing", r.ID)
		}
	}
	for _, want := range []string{
		"FAIL", "1 fail, 3 blind, 1 not run of 16 requested cells",
		"Errors", "Silently wrong", "control M1 not caught",
		"slotgate run --row fencing-migration --seed 1337",
		"so a pass would mean nothing",
		"valkey 8.1.1", "go-redis v9.23.0", "cluster:3x1", "4m12s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestHTMLEscapes(t *testing.T) {
	c := passing(report.RowRouting, report.ColumnErrors)
	c.Status = report.StatusFail
	c.Message = `<script>alert("x")</script>`
	c.Scenario = `routing/<img onerror=x>`
	c.Evidence.Counterexample = "</pre><b>bold</b>"
	c.Controls = []report.Control{{Name: "<i>M1</i>", Caught: true, Observed: "a & b"}}
	out := renderHTML(t, report.New(report.Meta{CommandLine: "slotgate <run>"}, []report.Check{c}))
	for _, bad := range []string{"<script>alert", "<img", "<b>bold", "<i>M1", "<run>"} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped %q in the report", bad)
		}
	}
	for _, good := range []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "&lt;/pre&gt;&lt;b&gt;bold", "a &amp; b"} {
		if !strings.Contains(out, good) {
			t.Errorf("escaped %q missing", good)
		}
	}
}

func TestHTMLPass(t *testing.T) {
	out := renderHTML(t, report.New(report.Meta{}, []report.Check{
		passing(report.RowRouting, report.ColumnErrors),
		passing(report.RowRouting, report.ColumnSilentlyWrong),
	}))
	if !strings.Contains(out, `class="verdict pass"`) || !strings.Contains(out, "<h1>PASS</h1>") {
		t.Errorf("passing run not rendered as PASS")
	}
}

func TestHTMLShowsControlKinds(t *testing.T) {
	c := passing(report.RowRouting, report.ColumnErrors)
	c.Controls = append(c.Controls, self, idle, legacy)
	out := renderHTML(t, report.New(report.Meta{}, []report.Check{c}))
	for _, want := range []string{"<th>Kind</th>", "<b>variant</b>", ">self-test<", ">unclassified<", "– not exercised"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestJSONCarriesKindAndExercised(t *testing.T) {
	c := passing(report.RowRouting, report.ColumnErrors)
	c.Controls = append(c.Controls, self)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"variant"`, `"kind":"self-test"`, `"exercised":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("results JSON lacks %s: %s", want, b)
		}
	}
}
