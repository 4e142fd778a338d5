package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// JUnit XML, as CI systems read it. A CI gate must never show a blind or
// missing cell as green, so blind checks and not-run cells of requested
// rows are failures (type "blind", "not-run"), and nothing is <skipped>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the scorecard as JUnit XML: one <testsuite> per row with
// checks or requested, one <testcase> per check (name = scenario,
// classname = row.column). Run-level problems form a "slotgate" suite.
func WriteJUnit(w io.Writer, s *Scorecard) error {
	out := junitSuites{Name: "slotgate", Time: seconds(s.Meta.Duration)}
	run := runProperties(s.Meta)
	if pass, reasons := s.Gate(); !pass || len(s.Problems) > 0 || len(s.Unscored) > 0 {
		suite := junitSuite{Name: "slotgate", Properties: run}
		for _, p := range s.Problems {
			suite.Cases = append(suite.Cases, junitCase{
				Name: "run", Classname: "slotgate.run", Time: "0",
				Failure: &junitFailure{Message: p, Type: "problem", Body: p},
			})
		}
		for _, c := range s.Unscored {
			jc := junitCheck(c, "slotgate.unscored")
			jc.Failure = &junitFailure{Message: "check names a row or column the catalogue does not have", Type: "unscored", Body: checkText(c)}
			suite.Cases = append(suite.Cases, jc)
		}
		if len(s.Requested()) == 0 && len(reasons) > 0 {
			suite.Cases = append(suite.Cases, junitCase{
				Name: "gate", Classname: "slotgate.gate", Time: "0",
				Failure: &junitFailure{Message: "no row was scored", Type: "not-run"},
			})
		}
		if len(suite.Cases) > 0 {
			out.Suites = append(out.Suites, suite)
		}
	}
	for _, row := range s.Rows {
		requested := s.IsRequested(row.ID)
		suite := junitSuite{Name: string(row.ID), Properties: append(slices.Clip(run), junitProperty{"spec", row.Spec}, junitProperty{"title", row.Title})}
		var elapsed time.Duration
		for _, col := range Columns {
			cell := s.Cell(row.ID, col)
			for _, c := range cell.Checks {
				elapsed += time.Duration(c.Evidence.Duration)
				suite.Cases = append(suite.Cases, junitCheck(c, string(row.ID)+"."+string(col)))
			}
			if len(cell.Checks) == 0 && requested {
				suite.Cases = append(suite.Cases, junitCase{
					Name: "(no check)", Classname: string(row.ID) + "." + string(col), Time: "0",
					Failure: &junitFailure{Message: cell.Summary, Type: string(StatusNotRun)},
				})
			}
		}
		if len(suite.Cases) == 0 {
			continue
		}
		suite.Time = seconds(Duration(elapsed))
		if !s.Meta.StartedAt.IsZero() {
			suite.Timestamp = s.Meta.StartedAt.UTC().Format("2006-01-02T15:04:05")
		}
		out.Suites = append(out.Suites, suite)
	}
	for i := range out.Suites {
		su := &out.Suites[i]
		su.Tests = len(su.Cases)
		for _, c := range su.Cases {
			if c.Failure != nil {
				su.Failures++
			}
		}
		out.Tests += su.Tests
		out.Failures += su.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// junitCheck renders one check; fail and blind verdicts are failures.
func junitCheck(c Check, classname string) junitCase {
	e := c.Evidence
	props := []junitProperty{
		{"status", string(c.Status)},
		{"verdict", string(c.Verdict())},
		{"seed", strconv.FormatInt(e.Seed, 10)},
		{"replay", c.Replay()},
	}
	for _, p := range []junitProperty{{"topology", e.Topology}, {"server", e.Server}, {"client", e.Client}, {"profile", e.Profile}} {
		if p.Value != "" {
			props = append(props, p)
		}
	}
	jc := junitCase{
		Name:       c.Scenario,
		Classname:  classname,
		Time:       seconds(e.Duration),
		Properties: props,
		SystemOut:  checkText(c),
	}
	switch v := c.Verdict(); v {
	case StatusFail:
		jc.Failure = &junitFailure{Message: firstLine(c.Message), Type: string(v), Body: checkText(c)}
	case StatusBlind:
		jc.Failure = &junitFailure{
			Message: "blind: " + firstLine(c.Reason()) + " — no caught real bad variant proves the check can fail, so its pass means nothing",
			Type:    string(v),
			Body:    checkText(c),
		}
	case StatusInconclusive:
		jc.Failure = &junitFailure{Message: firstLine(c.Reason()) + " — the harness's, not a verdict on the implementation", Type: string(v), Body: checkText(c)}
	}
	return jc
}

// checkText is a check's evidence as plain text, for CI logs.
func checkText(c Check) string {
	var b strings.Builder
	e := c.Evidence
	fmt.Fprintf(&b, "%s/%s %s: %s\n", c.Row, c.Column, c.Verdict(), c.Scenario)
	if c.Message != "" {
		fmt.Fprintf(&b, "message: %s\n", c.Message)
	}
	if c.Verdict() != c.Status {
		fmt.Fprintf(&b, "why %s: %s\n", c.Verdict(), c.Reason())
	}
	for _, ctl := range c.Controls {
		mark := "caught"
		switch {
		case !ctl.Exercised:
			mark = "not exercised"
		case !ctl.Caught:
			mark = "NOT CAUGHT"
		}
		kind := string(ctl.Kind)
		if kind == "" {
			kind = "unclassified"
		}
		fmt.Fprintf(&b, "control %s [%s] (%s): %s — %s\n", ctl.Name, kind, ctl.Why, mark, ctl.Observed)
	}
	for _, o := range e.Observed {
		fmt.Fprintf(&b, "observed: %s\n", o)
	}
	if e.Counterexample != "" {
		fmt.Fprintf(&b, "counterexample:\n%s\n", strings.TrimRight(e.Counterexample, "\n"))
	}
	for _, k := range sortedKeys(e.Metrics) {
		fmt.Fprintf(&b, "metric %s = %s\n", k, formatFloat(e.Metrics[k]))
	}
	for _, k := range sortedKeys(e.Timings) {
		fmt.Fprintf(&b, "timing %s = %s\n", k, formatDuration(e.Timings[k]))
	}
	for _, f := range e.Faults {
		fmt.Fprintf(&b, "fault %s on %s: %s → %s (%s)\n", f.Fault, f.Target,
			f.Start.UTC().Format(time.RFC3339Nano), f.End.UTC().Format(time.RFC3339Nano), formatDuration(Duration(f.End.Sub(f.Start))))
	}
	fmt.Fprintf(&b, "replay: %s\n", c.Replay())
	return b.String()
}

// runProperties are the run-level facts every suite carries.
func runProperties(m Meta) []junitProperty {
	props := []junitProperty{{"seed", strconv.FormatInt(m.Seed, 10)}}
	add := func(name, value string) {
		if value != "" {
			props = append(props, junitProperty{name, value})
		}
	}
	add("profile", m.Profile)
	add("provider", m.Provider)
	add("slotgate", m.Version)
	add("go", m.GoVersion)
	add("servers", strings.Join(m.Servers, ", "))
	add("clients", strings.Join(m.Clients, ", "))
	add("host", m.Host)
	add("command", m.CommandLine)
	return props
}

func seconds(d Duration) string {
	return strconv.FormatFloat(time.Duration(d).Seconds(), 'f', 3, 64)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// formatFloat prints a metric without float noise: integers as integers,
// other values to four significant digits (one decimal from 1000 up).
func formatFloat(f float64) string {
	switch {
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatInt(int64(f), 10)
	case math.Abs(f) >= 1000:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}

// formatDuration rounds a duration to what a reader can use.
func formatDuration(d Duration) string {
	t := time.Duration(d)
	switch abs := max(t, -t); {
	case abs < time.Millisecond:
		return t.Round(time.Microsecond).String()
	case abs < time.Second:
		return t.Round(100 * time.Microsecond).String()
	case abs < time.Minute:
		return t.Round(10 * time.Millisecond).String()
	}
	return t.Round(time.Second).String()
}
