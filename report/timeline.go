package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
)

// A scenario's timeline: what a reviewer would rather see than read
// (Jepsen's perf plots, house style "Draw what a reviewer would rather
// see"): throughput, errors and latency over the scenario clock, per client
// series, with every fault window shaded and named and every measured span
// (a dispatch halt, an outage) drawn, so the halt shows without reading a
// number. Bucketize is the pure part (history → buckets); RenderSVG draws
// the buckets as inline SVG for report.html, which stays one file.

// DefaultBucket is the timeline's resolution: 100 ms, fine enough to show a
// sub-second halt.
const DefaultBucket = 100 * time.Millisecond

// MaxBuckets caps a timeline's buckets; a longer scenario gets wider
// buckets (a multiple of the one asked for). It bounds each timeline's share
// of results.json and report.html whatever the profile: a smoke timeline
// draws in 5–30 KB, the worst case (errors in every bucket of three series,
// a hundred fault windows) in under 128 KB (TestRenderSVGWorstCaseSize), so
// a run's ~20 fault-injecting checks keep report.html well under 5 MB.
const MaxBuckets = 240

// Timeline is a scenario's history reduced to buckets on its clock. It
// rides in a check's Evidence (and so in results.json), already
// downsampled.
type Timeline struct {
	// Bucket is the width of one bucket; End is the length of the axis.
	Bucket Duration `json:"bucket"`
	End    Duration `json:"end"`
	// Series are the client series, one per Op.Backend, in the order their
	// first operation was recorded (a suite lists the scored client before
	// its controls).
	Series []TimelineSeries `json:"series"`
	Faults []TimelineWindow `json:"faults,omitempty"`
	Spans  []TimelineWindow `json:"spans,omitempty"`
	// Caption says what the timeline shows when it is not the checked
	// run itself (a negative control's counterexample).
	Caption string `json:"caption,omitempty"`
}

// TimelineSeries is one client series' operations per bucket, counted at
// the time each operation ended.
type TimelineSeries struct {
	Name    string `json:"name"`
	OK      []int  `json:"ok"`
	Failed  []int  `json:"failed"`
	Unknown []int  `json:"unknown"`
	// P50 and P99 are the latencies (ms, 2 decimals) of the operations that
	// ended in each bucket, whatever their outcome; 0 where none did.
	P50 []float64 `json:"p50_ms"`
	P99 []float64 `json:"p99_ms"`
}

// TimelineWindow is a fault window or a span on the timeline.
type TimelineWindow struct {
	Name   string   `json:"name"`
	Target string   `json:"target,omitempty"`
	Start  Duration `json:"start"`
	End    Duration `json:"end"`
}

// Bucketize reduces h to a Timeline of buckets of width bucket (widened to
// a multiple of it when the scenario would need more than MaxBuckets).
// Operations go in the bucket their End falls in: a halted call shows as
// silence, then as one late, slow completion, which is what a client saw.
func Bucketize(h history.History, bucket time.Duration) Timeline {
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	var end time.Duration
	for _, o := range h.Ops {
		end = max(end, o.End)
	}
	for _, f := range h.Faults {
		end = max(end, f.End)
	}
	for _, s := range h.Spans {
		end = max(end, s.End)
	}
	n := int((end + bucket - 1) / bucket)
	if n > MaxBuckets {
		per := (n + MaxBuckets - 1) / MaxBuckets
		bucket *= time.Duration(per)
		n = int((end + bucket - 1) / bucket)
	}
	n = max(n, 1)
	t := Timeline{Bucket: Duration(bucket), End: Duration(time.Duration(n) * bucket)}

	type acc struct {
		s    TimelineSeries
		lats [][]time.Duration
	}
	by := map[string]*acc{}
	var order []string
	for _, o := range h.Ops {
		name := o.Backend
		if name == "" {
			name = "client"
		}
		a := by[name]
		if a == nil {
			a = &acc{s: TimelineSeries{Name: name, OK: make([]int, n), Failed: make([]int, n), Unknown: make([]int, n)}, lats: make([][]time.Duration, n)}
			by[name] = a
			order = append(order, name)
		}
		i := min(max(int(o.End/bucket), 0), n-1)
		switch o.Outcome {
		case history.OK:
			a.s.OK[i]++
		case history.Failed:
			a.s.Failed[i]++
		default: // unknown stays unknown, never ok
			a.s.Unknown[i]++
		}
		a.lats[i] = append(a.lats[i], max(o.End-o.Start, 0))
	}
	for _, name := range order {
		a := by[name]
		a.s.P50, a.s.P99 = make([]float64, n), make([]float64, n)
		for i, ls := range a.lats {
			if len(ls) == 0 {
				continue
			}
			slices.Sort(ls)
			a.s.P50[i], a.s.P99[i] = ms(rank(ls, 0.50)), ms(rank(ls, 0.99))
		}
		t.Series = append(t.Series, a.s)
	}
	for _, f := range h.Faults {
		t.Faults = append(t.Faults, TimelineWindow{Name: f.Fault, Target: f.Target, Start: Duration(f.Start), End: Duration(f.End)})
	}
	for _, s := range h.Spans {
		t.Spans = append(t.Spans, TimelineWindow{Name: s.Name, Target: s.Client, Start: Duration(s.Start), End: Duration(s.End)})
	}
	return t
}

// rank is the nearest-rank percentile of sorted ls.
func rank(ls []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(ls)))) - 1
	return ls[min(max(i, 0), len(ls)-1)]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*100) / 100 }

// Geometry of the drawing, in SVG user units (px at 100% zoom).
const (
	svgWidth   = 960
	svgLeft    = 124 // room for the lane and axis labels
	svgRight   = 12
	svgThrough = 64 // height of a series' throughput chart
	svgLatency = 52 // height of a series' latency chart
	svgGap     = 22 // between series (holds the series' title)
	svgLane    = 15 // one lane of fault or span labels
	maxLanes   = 6  // fault lanes drawn before they share one
)

// faultFill and spanFill pick colours by name, stable across timelines.
var (
	faultFills = []string{"#f59e0b", "#8b5cf6", "#0ea5e9", "#ec4899", "#14b8a6"}
	spanFills  = []string{"#dc2626", "#7c3aed", "#b45309", "#0369a1"}
)

// RenderSVG draws t as one inline SVG: per series a throughput chart (ok
// per second, failed and unknown stacked in red and amber) over a latency
// chart (p50 and p99, log scale); the fault windows shaded across every
// chart and named in a lane above; the spans as bars in lanes below. Every
// window and span carries a <title>, so hovering names it exactly.
func RenderSVG(t Timeline) template.HTML {
	if len(t.Series) == 0 && len(t.Faults) == 0 && len(t.Spans) == 0 {
		return ""
	}
	end := time.Duration(t.End)
	if end <= 0 {
		end = time.Second
	}
	plotW := float64(svgWidth - svgLeft - svgRight)
	x := func(d Duration) float64 {
		return svgLeft + plotW*math.Min(math.Max(float64(d)/float64(end), 0), 1)
	}
	faultLanes := laneNames(t.Faults)
	spanLanes := laneNames(t.Spans)
	// Lanes whose names share their first word share a colour ("pod-1
	// lease", "pod-1 calls").
	var spanKeys []string
	for _, name := range spanLanes {
		if k := firstWord(name); !slices.Contains(spanKeys, k) {
			spanKeys = append(spanKeys, k)
		}
	}
	faultLane := func(w TimelineWindow) int { return slices.Index(faultLanes, w.Name) }
	if len(faultLanes) > maxLanes {
		// Many distinct faults (a slot move per slot): one lane, each
		// window still named by its <title>.
		faultLanes = []string{"faults"}
		faultLane = func(TimelineWindow) int { return 0 }
	}
	top := 4 + svgLane*len(faultLanes)
	seriesH := svgGap + svgThrough + 6 + svgLatency
	plotTop := top
	plotBottom := plotTop + seriesH*len(t.Series)
	axisY := plotBottom + 4
	spansTop := axisY + 22
	height := spansTop + svgLane*len(spanLanes) + 4

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="system-ui,sans-serif" font-size="11" role="img">`, svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<title>timeline: %d series, %d fault windows, %d spans</title>`, len(t.Series), len(t.Faults), len(t.Spans))

	// Fault windows: shaded across every chart, named in their lane.
	for _, f := range t.Faults {
		lane := faultLane(f)
		fill := faultFills[slices.Index(laneNames(t.Faults), f.Name)%len(faultFills)]
		x0, x1 := x(f.Start), x(f.End)
		w := math.Max(x1-x0, 1.5)
		fmt.Fprintf(&b, `<g class="fault"><title>%s</title>`, esc(windowTitle("fault", f)))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity=".16"/>`, x0, plotTop, w, plotBottom-plotTop, fill)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, x0, 4+svgLane*lane, w, svgLane-4, fill)
		b.WriteString(`</g>`)
	}
	for i, name := range faultLanes {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555" font-size="10"><title>%s</title>%s</text>`, svgLeft-4, 4+svgLane*i+svgLane-6, esc(name), esc(short(name, 21)))
	}

	for i, s := range t.Series {
		y0 := plotTop + seriesH*i
		renderSeries(&b, s, t, x, float64(y0))
	}

	// Time axis.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, svgLeft, axisY, svgWidth-svgRight, axisY)
	step := tickStep(end)
	for d := time.Duration(0); d <= end; d += step {
		xx := x(Duration(d))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/><text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`,
			xx, axisY, xx, axisY+4, xx, axisY+15, tickLabel(d, step))
	}

	// Spans: a bar per span in its name's lane.
	for _, s := range t.Spans {
		lane := slices.Index(spanLanes, s.Name)
		fill := spanFills[slices.Index(spanKeys, firstWord(s.Name))%len(spanFills)]
		x0, x1 := x(s.Start), x(s.End)
		y := spansTop + svgLane*lane
		fmt.Fprintf(&b, `<g class="span"><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" rx="2" fill="%s"/>`,
			esc(windowTitle("span", s)), x0, y, math.Max(x1-x0, 2), svgLane-4, fill)
		if label := spanLabel(s); x1-x0 > float64(6*len([]rune(label))+4) {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#fff" font-size="10">%s</text>`, x0+3, y+svgLane-6, esc(label))
		}
		b.WriteString(`</g>`)
	}
	for i, name := range spanLanes {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555" font-size="10"><title>%s</title>%s</text>`, svgLeft-4, spansTop+svgLane*i+svgLane-6, esc(name), esc(short(name, 21)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text went through esc
}

// renderSeries draws one series' throughput and latency charts at y0.
func renderSeries(b *strings.Builder, s TimelineSeries, t Timeline, x func(Duration) float64, y0 float64) {
	n := len(s.OK)
	perSec := float64(time.Second) / float64(t.Bucket)
	var peak float64
	for i := range n {
		peak = math.Max(peak, float64(s.OK[i]+s.Failed[i]+s.Unknown[i])*perSec)
	}
	peak = niceCeil(math.Max(peak, 1))
	var errs int
	for i := range n {
		errs += s.Failed[i] + s.Unknown[i]
	}
	fmt.Fprintf(b, `<text x="%d" y="%.0f" font-weight="600" fill="#222">%s</text><text x="%d" y="%.0f" fill="#777" text-anchor="end">ops/s (ok · <tspan fill="#dc2626">failed</tspan> · <tspan fill="#d97706">unknown</tspan>: %d) · latency p50 <tspan fill="#2563eb">—</tspan> p99 <tspan fill="#ea580c">—</tspan></text>`,
		svgLeft, y0+svgGap-6, esc(s.Name), svgWidth-svgRight, y0+svgGap-6, errs)
	ty := y0 + svgGap
	bottom := ty + svgThrough
	fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#ddd"/>`, svgLeft, ty, svgWidth-svgLeft-svgRight, svgThrough)
	fmt.Fprintf(b, `<text x="%d" y="%.0f" text-anchor="end" fill="#777">%s/s</text><text x="%d" y="%.0f" text-anchor="end" fill="#777">0</text>`,
		svgLeft-4, ty+9, compact(peak), svgLeft-4, bottom)
	yOf := func(v float64) float64 { return bottom - svgThrough*math.Min(v/peak, 1) }
	// Ok as one step path from the baseline; failed, then unknown,
	// stacked on it as a bar per bucket that had any (sparse: most have
	// none), which keeps a timeline to a few KB per series.
	var p strings.Builder
	fmt.Fprintf(&p, "M%.1f %.1f", x(0), bottom)
	for i := range n {
		fmt.Fprintf(&p, "V%.1fH%.1f", yOf(float64(s.OK[i])*perSec), x(Duration(i+1)*t.Bucket))
	}
	fmt.Fprintf(b, `<path d="%sV%.1fZ" fill="#64748b"/>`, p.String(), bottom)
	var failed, unknown strings.Builder
	for i := range n {
		base := float64(s.OK[i]) * perSec
		x0, x1 := x(Duration(i)*t.Bucket), x(Duration(i+1)*t.Bucket)
		for _, e := range []struct {
			n int
			p *strings.Builder
		}{{s.Failed[i], &failed}, {s.Unknown[i], &unknown}} {
			if e.n == 0 {
				continue
			}
			top := base + float64(e.n)*perSec
			fmt.Fprintf(e.p, "M%.1f %.1fH%.1fV%.1fH%.1fZ", x0, yOf(top), x1, yOf(base), x0)
			base = top
		}
	}
	for _, e := range []struct {
		p    *strings.Builder
		fill string
	}{{&failed, "#dc2626"}, {&unknown, "#d97706"}} {
		if e.p.Len() > 0 {
			fmt.Fprintf(b, `<path d="%s" fill="%s"/>`, e.p.String(), e.fill)
		}
	}

	// Latency, log scale from 0.1 ms to a decade over the worst p99.
	ly := bottom + 6
	lb := ly + svgLatency
	fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#ddd"/>`, svgLeft, ly, svgWidth-svgLeft-svgRight, svgLatency)
	worst := 1.0
	for _, v := range s.P99 {
		worst = math.Max(worst, v)
	}
	lo, hi := -1.0, math.Ceil(math.Log10(worst))
	if hi <= lo {
		hi = lo + 1
	}
	lyOf := func(v float64) float64 {
		l := math.Log10(math.Max(v, 0.1))
		return lb - svgLatency*(l-lo)/(hi-lo)
	}
	for d := lo; d <= hi; d++ {
		yy := lyOf(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" fill="#777" font-size="9">%s</text>`,
			svgLeft, yy, svgWidth-svgRight, yy, svgLeft-4, yy+3, msLabel(math.Pow(10, d)))
	}
	line(b, t, x, lyOf, s.P50, "#2563eb")
	line(b, t, x, lyOf, s.P99, "#ea580c")
}

// line draws vs (0 = no operation in the bucket: a gap) as a polyline per
// run of buckets that had operations.
func line(b *strings.Builder, t Timeline, x func(Duration) float64, y func(float64) float64, vs []float64, stroke string) {
	var p strings.Builder
	open := false
	for i, v := range vs {
		if v <= 0 {
			open = false
			continue
		}
		cmd := "L"
		if !open {
			cmd = "M"
		}
		open = true
		fmt.Fprintf(&p, "%s%.1f %.1f", cmd, x(Duration(i)*t.Bucket+t.Bucket/2), y(v))
	}
	if p.Len() > 0 {
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.3"/>`, p.String(), stroke)
	}
}

// laneNames is the windows' distinct names in first-seen order: one lane
// each.
func laneNames(ws []TimelineWindow) []string {
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w.Name) {
			out = append(out, w.Name)
		}
	}
	return out
}

func windowTitle(kind string, w TimelineWindow) string {
	s := fmt.Sprintf("%s %s", kind, w.Name)
	if w.Target != "" {
		s += " (" + w.Target + ")"
	}
	return fmt.Sprintf("%s: +%s → +%s (%s)", s, formatDuration(w.Start), formatDuration(w.End), formatDuration(w.End-w.Start))
}

// spanLabel is what a span's bar says when it is wide enough: its target
// (a shard, an operation), else its length; the title has both.
func spanLabel(s TimelineWindow) string {
	if s.Target != "" {
		return s.Target
	}
	return formatDuration(s.End - s.Start)
}

// tickStep picks a round step giving 5–12 ticks over end.
func tickStep(end time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute} {
		if end/s <= 12 {
			return s
		}
	}
	return 10 * time.Minute
}

func tickLabel(d, step time.Duration) string {
	if step < 100*time.Millisecond {
		return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
	}
	if step < time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%gs", d.Seconds())
}

func compact(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

func msLabel(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%gs", v/1000)
	}
	return fmt.Sprintf("%gms", v)
}

func short(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func firstWord(s string) string { w, _, _ := strings.Cut(s, " "); return w }

func esc(s string) string { return html.EscapeString(s) }
