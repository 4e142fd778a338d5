package report_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

type xSuites struct {
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Properties []xProperty `xml:"properties>property"`
	Cases      []xCase     `xml:"testcase"`
}

type xProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Props     []xProperty `xml:"properties>property"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct{} `xml:"skipped"`
}

func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJUnit(&buf, SampleScorecard()); err != nil {
		t.Fatal(err)
	}
	var got xSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, buf.String())
	}
	// 16 checks + 1 requested cell with none (presence-mget/errors).
	if got.Tests != 17 {
		t.Errorf("tests = %d, want 17", got.Tests)
	}
	// 1 fail + 3 blind + 1 not run: nothing that fails the gate is green.
	if got.Failures != 5 {
		t.Errorf("failures = %d, want 5", got.Failures)
	}
	types := map[string]int{}
	sum := 0
	for _, s := range got.Suites {
		sum += s.Failures
		if _, ok := report.Lookup(report.RowID(s.Name)); !ok {
			t.Errorf("suite %q is not a row", s.Name)
		}
		if !hasProp(s.Properties, "seed", "1337") {
			t.Errorf("suite %s lacks the seed property: %+v", s.Name, s.Properties)
		}
		for _, c := range s.Cases {
			if c.Skipped != nil {
				t.Errorf("%s: skipped; blind and not-run must be failures", c.Name)
			}
			if !strings.HasPrefix(c.Classname, s.Name+".") {
				t.Errorf("classname %q not under %s", c.Classname, s.Name)
			}
			if c.Failure != nil {
				types[c.Failure.Type]++
			}
		}
	}
	if sum != got.Failures {
		t.Errorf("suite failures sum to %d, total says %d", sum, got.Failures)
	}
	if types["fail"] != 1 || types["blind"] != 3 || types["not-run"] != 1 {
		t.Errorf("failure types = %v", types)
	}
	for _, s := range got.Suites {
		for _, c := range s.Cases {
			if c.Name != "fencing-migration/rollback/b-to-a" {
				continue
			}
			if !strings.Contains(c.Failure.Body, "op 1204  relay-2  ACQUIRE s-0042 → gen 7") {
				t.Errorf("counterexample missing from failure body: %q", c.Failure.Body)
			}
			for _, p := range []string{"seed", "topology", "server", "client"} {
				if !hasProp(c.Props, p, "") {
					t.Errorf("testcase lacks property %s", p)
				}
			}
		}
	}
}

func hasProp(props []xProperty, name, value string) bool {
	for _, p := range props {
		if p.Name == name && (value == "" || p.Value == value) {
			return true
		}
	}
	return false
}
