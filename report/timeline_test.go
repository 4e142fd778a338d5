package report_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/report"
)

// haltHistory is a 6 s scenario: two backends writing every 10 ms; a
// failover from 2 s to 3 s during which go-redis halts (no completion from
// 2.0 s to 3.5 s, then one slow completion and two failures) and valkey-go
// keeps going.
func haltHistory() history.History {
	h := history.History{Scenario: "failure-drills/dispatch/go-redis", Seed: 7}
	for _, b := range []string{"go-redis", "valkey-go"} {
		for t := time.Duration(0); t < 6*time.Second; t += 10 * time.Millisecond {
			op := history.Op{Start: t, End: t + time.Millisecond, Backend: b, Kind: "set", Outcome: history.OK}
			if b == "go-redis" && t >= 2*time.Second && t < 3500*time.Millisecond {
				continue
			}
			h.Ops = append(h.Ops, op)
		}
	}
	h.Ops = append(h.Ops,
		history.Op{Start: 2 * time.Second, End: 3520 * time.Millisecond, Backend: "go-redis", Kind: "set", Outcome: history.OK},
		history.Op{Start: 3400 * time.Millisecond, End: 3550 * time.Millisecond, Backend: "go-redis", Kind: "set", Outcome: history.Failed, ErrKind: "network"},
		history.Op{Start: 3400 * time.Millisecond, End: 3560 * time.Millisecond, Backend: "go-redis", Kind: "set", Outcome: history.Unknown},
	)
	h.Faults = []history.FaultWindow{{Fault: "failover/kill", Target: "shard 1", Start: 2 * time.Second, End: 3 * time.Second}}
	h.Spans = []history.Span{{Name: "dispatch halt", Client: "go-redis", Start: 2 * time.Second, End: 3520 * time.Millisecond}}
	return h
}

func TestBucketize(t *testing.T) {
	tl := report.Bucketize(haltHistory(), report.DefaultBucket)
	if tl.Bucket != report.Duration(100*time.Millisecond) || tl.End != report.Duration(6*time.Second) {
		t.Fatalf("bucket %v end %v, want 100ms over 6s", tl.Bucket, tl.End)
	}
	if len(tl.Series) != 2 || tl.Series[0].Name != "go-redis" || tl.Series[1].Name != "valkey-go" {
		t.Fatalf("series %+v, want go-redis, valkey-go", tl.Series)
	}
	g := tl.Series[0]
	if len(g.OK) != 60 {
		t.Fatalf("%d buckets, want 60", len(g.OK))
	}
	// The halt is silence: no completion in buckets 20..34.
	for i := 20; i < 35; i++ {
		if g.OK[i]+g.Failed[i]+g.Unknown[i] != 0 {
			t.Errorf("bucket %d: %d ok, %d failed during the halt", i, g.OK[i], g.Failed[i])
		}
	}
	// Then the slow completion, the failure and the unknown in bucket 35,
	// each in its own count (unknown never counted ok).
	if g.Failed[35] != 1 || g.Unknown[35] != 1 || g.OK[35] != 11 {
		t.Errorf("bucket 35: ok %d failed %d unknown %d, want 11 (the halted call among them), 1, 1", g.OK[35], g.Failed[35], g.Unknown[35])
	}
	if g.P99[35] < 1000 || g.P50[35] != 1 {
		t.Errorf("bucket 35 latency p50 %v p99 %v ms, want 1 and the 1.5 s halted call", g.P50[35], g.P99[35])
	}
	if v := tl.Series[1]; v.OK[25] != 10 || v.P50[25] != 1 {
		t.Errorf("valkey-go during the failover: ok %d p50 %v, want 10 per bucket at 1 ms", v.OK[25], v.P50[25])
	}
	if len(tl.Faults) != 1 || tl.Faults[0].Start != report.Duration(2*time.Second) || tl.Faults[0].Target != "shard 1" {
		t.Errorf("faults %+v", tl.Faults)
	}
	if len(tl.Spans) != 1 || tl.Spans[0].Target != "go-redis" {
		t.Errorf("spans %+v", tl.Spans)
	}
}

// A long scenario is downsampled to at most MaxBuckets buckets, each a
// multiple of the asked width, with every operation still counted.
func TestBucketizeDownsamples(t *testing.T) {
	var h history.History
	for t := time.Duration(0); t < 10*time.Minute; t += 50 * time.Millisecond {
		h.Ops = append(h.Ops, history.Op{Start: t, End: t + time.Millisecond, Outcome: history.OK})
	}
	tl := report.Bucketize(h, report.DefaultBucket)
	n := len(tl.Series[0].OK)
	if n > report.MaxBuckets || n < report.MaxBuckets/2 {
		t.Errorf("%d buckets, want at most %d and not far fewer", n, report.MaxBuckets)
	}
	if time.Duration(tl.Bucket)%(100*time.Millisecond) != 0 {
		t.Errorf("bucket %v is not a multiple of 100ms", tl.Bucket)
	}
	total := 0
	for _, c := range tl.Series[0].OK {
		total += c
	}
	if total != len(h.Ops) {
		t.Errorf("%d operations counted, want %d", total, len(h.Ops))
	}
	if tl.Series[0].Name != "client" {
		t.Errorf("series without a backend named %q", tl.Series[0].Name)
	}
}

var rectX = regexp.MustCompile(`<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)

// The SVG is well-formed, has a throughput and a latency chart per series,
// and shades the fault window where it was: 2 s to 3 s of a 6 s axis.
func TestRenderSVG(t *testing.T) {
	svg := string(report.RenderSVG(report.Bucketize(haltHistory(), report.DefaultBucket)))
	if os.Getenv("SLOTGATE_TIMELINE_OUT") != "" { // look at it: rsvg-convert -o x.png x.svg
		_ = os.WriteFile(os.Getenv("SLOTGATE_TIMELINE_OUT"), []byte(svg), 0o644)
	}
	d := xml.NewDecoder(strings.NewReader(svg))
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					counts["."+a.Value]++
				}
			}
		}
	}
	if counts["svg"] != 1 || counts[".fault"] != 1 || counts[".span"] != 1 {
		t.Errorf("elements %v: want one svg, one fault, one span", counts)
	}
	for _, want := range []string{"go-redis", "valkey-go", "failover/kill", "dispatch halt", "fault failover/kill (shard 1): +2s → +3s (1s)", "span dispatch halt (go-redis): +2s → +3.52s"} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	// The shading: the first rect of the fault group.
	i := strings.Index(svg, `<g class="fault">`)
	m := rectX.FindStringSubmatch(svg[i:])
	if m == nil {
		t.Fatal("no fault rect")
	}
	x, _ := strconv.ParseFloat(m[1], 64)
	w, _ := strconv.ParseFloat(m[2], 64)
	plot := 960.0 - 124 - 12
	if wantX, wantW := 124+plot*2/6, plot/6; abs(x-wantX) > 0.2 || abs(w-wantW) > 0.2 {
		t.Errorf("fault shaded at x=%v w=%v, want x=%v w=%v", x, w, wantX, wantW)
	}
	if n := len(svg); n > 40_000 {
		t.Errorf("one timeline is %d bytes; the report budget assumes ~20 KB", n)
	}
}

// Names are escaped: a fault or series name cannot inject markup.
func TestRenderSVGEscapes(t *testing.T) {
	h := history.History{Ops: []history.Op{{End: time.Millisecond, Backend: `<script>x</script>`, Outcome: history.OK}},
		Faults: []history.FaultWindow{{Fault: `a"b`, Start: 0, End: time.Millisecond}}}
	svg := string(report.RenderSVG(report.Bucketize(h, 0)))
	if strings.Contains(svg, "<script>") || strings.Contains(svg, `a"b`) {
		t.Errorf("unescaped name in %s", svg)
	}
	if report.RenderSVG(report.Timeline{}) != "" {
		t.Error("an empty timeline draws something")
	}
}

// The report embeds the timeline inline: no external reference.
func TestHTMLEmbedsTimeline(t *testing.T) {
	tl := report.Bucketize(haltHistory(), report.DefaultBucket)
	c := report.Check{Row: report.RowFailureDrills, Column: report.ColumnErrors, Scenario: "failure-drills/dispatch/go-redis", Status: report.StatusPass,
		Evidence: report.Evidence{Timeline: &tl}, Controls: []report.Control{ok}}
	var b strings.Builder
	if err := report.WriteHTML(&b, report.New(report.Meta{}, []report.Check{c})); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `<div class="tl"><svg class="timeline"`) {
		t.Error("no inline timeline in the report")
	}
	for _, bad := range []string{`<img`, `src="http`, `href="http`} {
		if strings.Contains(out, bad) {
			t.Errorf("report references %s", bad)
		}
	}
	fmt.Fprint(io.Discard, out)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// The worst case a full-profile scenario can draw — 20 minutes, three
// series with failures and unknowns in every bucket, a hundred fault
// windows and spans — stays within the per-timeline budget that keeps
// report.html under 5 MB (a run has ~20 fault-injecting checks; 5 MB holds
// ~40 worst cases).
func TestRenderSVGWorstCaseSize(t *testing.T) {
	var h history.History
	for _, b := range []string{"go-redis", "halt-all (control)", "naive go-redis (control)"} {
		for t := time.Duration(0); t < 20*time.Minute; t += 50 * time.Millisecond {
			o := history.Op{Start: t, End: t + time.Duration(t%7)*time.Millisecond, Backend: b, Outcome: history.OK}
			switch (t / (50 * time.Millisecond)) % 5 {
			case 1:
				o.Outcome = history.Failed
			case 2:
				o.Outcome = history.Unknown
			}
			h.Ops = append(h.Ops, o)
		}
	}
	for i := range 100 {
		at := time.Duration(i) * 12 * time.Second
		h.Faults = append(h.Faults, history.FaultWindow{Fault: fmt.Sprintf("slot/migrate-%d", i), Start: at, End: at + 5*time.Second})
		h.Spans = append(h.Spans, history.Span{Name: "pool halt", Client: "shard 1", Start: at, End: at + 3*time.Second})
	}
	svg := report.RenderSVG(report.Bucketize(h, report.DefaultBucket))
	if n := len(svg); n > 128<<10 {
		t.Errorf("worst-case timeline is %d bytes, want at most 128 KB", n)
	} else {
		t.Logf("worst-case timeline: %d bytes", n)
	}
}
