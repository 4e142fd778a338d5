package report

import (
	"fmt"
	"strings"
	"time"
)

// The part of a Ginkgo JSON report (`ginkgo --json-report`, Ginkgo's
// types.Report) that slotgate scores, decoded into slotgate's own types:
// the CLI reads these files after the suites ran, and neither it nor report
// links Ginkgo or Gomega (only suites/ assert). Field names are
// Ginkgo's JSON keys; enum values (states, node types) are the strings
// Ginkgo writes.

// GinkgoReport is one suite's report.
type GinkgoReport struct {
	SuitePath                  string
	SuiteDescription           string
	StartTime, EndTime         time.Time
	RunTime                    time.Duration
	SpecialSuiteFailureReasons []string
	SpecReports                []GinkgoSpec
}

// GinkgoSpec is one spec or setup node as Ginkgo reported it.
type GinkgoSpec struct {
	ContainerHierarchyTexts  []string
	ContainerHierarchyLabels [][]string
	LeafNodeType             string
	LeafNodeText             string
	LeafNodeLabels           []string
	State                    string
	RunTime                  time.Duration
	Failure                  GinkgoFailure
	ReportEntries            []GinkgoEntry
}

// GinkgoFailure is why a spec failed.
type GinkgoFailure struct {
	Message        string
	Location       GinkgoLocation
	ForwardedPanic string
	// FailureNodeType is the node the failure happened in: "It", or a
	// setup node ("BeforeEach": the harness's topology reset).
	FailureNodeType string
}

// GinkgoLocation is a place in the source.
type GinkgoLocation struct {
	FileName       string
	LineNumber     int
	FullStackTrace string
	CustomMessage  string
}

// GinkgoEntry is one AddReportEntry: its value as JSON.
type GinkgoEntry struct {
	Name     string
	Location GinkgoLocation
	Value    struct {
		AsJSON         string
		Representation string
	}
}

// Ginkgo's spec states and the leaf node type slotgate times.
const (
	ginkgoPending     = "pending"
	ginkgoSkipped     = "skipped"
	ginkgoInterrupted = "interrupted"
	ginkgoTimedout    = "timedout"
	ginkgoIt          = "It"
)

// String is the location as Ginkgo prints it.
func (l GinkgoLocation) String() string {
	if l.CustomMessage != "" {
		return l.CustomMessage
	}
	return fmt.Sprintf("%s:%d", l.FileName, l.LineNumber)
}

// FullText is the spec's container texts and its own, joined with spaces
// (Ginkgo's SpecReport.FullText).
func (s GinkgoSpec) FullText() string {
	var texts []string
	for _, t := range append(append([]string(nil), s.ContainerHierarchyTexts...), s.LeafNodeText) {
		if t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, " ")
}

// Labels is every label of the spec and its containers, once each.
func (s GinkgoSpec) Labels() []string {
	var out []string
	seen := map[string]bool{}
	add := func(labels []string) {
		for _, l := range labels {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	for _, ls := range s.ContainerHierarchyLabels {
		add(ls)
	}
	add(s.LeafNodeLabels)
	return out
}

// Failed reports whether the spec ended in one of Ginkgo's failure states
// (failed, aborted, panicked, interrupted, timedout).
func (s GinkgoSpec) Failed() bool {
	switch s.State {
	case "failed", "aborted", "panicked", "interrupted", "timedout":
		return true
	}
	return false
}
