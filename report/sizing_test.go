package report_test

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func sizingSample() report.Sizing {
	s := report.Sizing{Rate: 20000, DurationMS: 2000, Repeats: 3, Senders: 2, Shards: []int{1, 3, 6}, Modes: []string{"classic", "sharded", "<get>"}}
	for _, n := range s.Shards {
		s.Points = append(s.Points,
			report.SizingPoint{Shards: n, Mode: "classic", Command: "PUBLISH", PerNodeUS: 2.4, PerNodeMinUS: 2.2, PerNodeMaxUS: 2.6},
			report.SizingPoint{Shards: n, Mode: "sharded", Command: "SPUBLISH", PerNodeUS: 2.4 / float64(n), PerNodeMinUS: 2.3 / float64(n), PerNodeMaxUS: 2.5 / float64(n)},
			report.SizingPoint{Shards: n, Mode: "<get>", Command: "GET", PerNodeUS: 5 / float64(n), PerNodeMinUS: 5 / float64(n), PerNodeMaxUS: 5 / float64(n)})
	}
	s.Bars = []report.SizingBar{{Name: "sharded-3-vs-1", Value: 0.33, Low: 0.22, High: 0.5, Met: true}, {Name: "classic-3-vs-1", Value: 0.4, Low: 0.67, High: 1.5}}
	s.Broadcast = []report.SizingBroadcast{{Shards: 3, PerNodeUS: 1.6, ShareOfCost: 0.66}}
	return s
}

// The page is one self-contained file: two well-formed inline SVG charts, no script, no
// fetched asset, every name escaped.
func TestWriteSizingHTML(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteSizingHTML(&b, sizingSample()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 2 {
		t.Fatalf("want 2 charts, got %d", len(svgs))
	}
	for _, svg := range svgs {
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Fatalf("chart is not well-formed XML: %v", err)
		}
		if strings.Count(svg, "<polyline") != 4 { // three modes and the ideal curve
			t.Errorf("chart has %d lines", strings.Count(svg, "<polyline"))
		}
	}
	stripped := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, banned := range []string{"<script", "http://", "https://", "<get>"} {
		if strings.Contains(stripped, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	for _, want := range []string{"sharded-3-vs-1", "within", "outside", "&lt;get&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
