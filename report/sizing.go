package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Sizing is the fan-out sizing measurement (`slotgate size`) as data: the input spec 000
// §Open Decisions D1 (shard count) is blocked on — what each node's engine thread pays per
// message for classic PUBLISH, SPUBLISH and keyed commands at each shard count (Axiom A4).
// It is written as sizing.json and rendered by WriteSizingHTML; Sizing.SVG is the chart
// alone, so the main report can embed the same section.
type Sizing struct {
	Generated time.Time `json:"generated"`
	Version   string    `json:"version,omitempty"` // slotgate's
	Server    string    `json:"server,omitempty"`
	Host      string    `json:"host,omitempty"`
	// Rate is the target cluster-wide message rate (messages/s); DurationMS each burst's
	// send phase; Repeats the bursts per point (medians are reported); Senders the
	// pipelined senders per node.
	Rate       int               `json:"rate"`
	DurationMS float64           `json:"duration_ms"`
	Repeats    int               `json:"repeats"`
	Senders    int               `json:"senders"`
	Shards     []int             `json:"shards"`
	Modes      []string          `json:"modes"`
	Points     []SizingPoint     `json:"points"`
	Broadcast  []SizingBroadcast `json:"broadcast"`
	Bars       []SizingBar       `json:"bars"`
	Notes      []string          `json:"notes,omitempty"`
}

// SizingPoint is one mode at one shard count: medians over its repeats, and the repeats.
type SizingPoint struct {
	Shards  int    `json:"shards"`
	Mode    string `json:"mode"`
	Command string `json:"command"`
	// PerNodeUS is the median over repeats of the mean net main-thread CPU per node per
	// message (µs); Min/Max are the repeats' extremes.
	PerNodeUS    float64 `json:"per_node_us"`
	PerNodeMinUS float64 `json:"per_node_min_us"`
	PerNodeMaxUS float64 `json:"per_node_max_us"`
	// TotalUS is the cluster's net main-thread CPU per message (all nodes); HottestUS the
	// busiest node's; CallUS the command's own commandstats time per call.
	TotalUS   float64 `json:"total_us"`
	HottestUS float64 `json:"hottest_us"`
	CallUS    float64 `json:"call_us"`
	// BusPerMessage is the cluster-bus publish messages received per message: n−1 for
	// classic (A4's broadcast), 0 for sharded without replicas.
	BusPerMessage float64 `json:"bus_per_message"`
	// AchievedRate is the median send rate actually reached (messages/s).
	AchievedRate float64        `json:"achieved_rate"`
	Messages     int            `json:"messages"`
	Errors       int            `json:"errors"`
	Repeats      []SizingRepeat `json:"repeats"`
}

// SizingRepeat is one burst.
type SizingRepeat struct {
	PerNodeUS    float64      `json:"per_node_us"`
	TotalUS      float64      `json:"total_us"`
	AchievedRate float64      `json:"achieved_rate"`
	SendMS       float64      `json:"send_ms"`
	ElapsedMS    float64      `json:"elapsed_ms"`
	Errors       int          `json:"errors"`
	Nodes        []SizingNode `json:"nodes"`
}

// SizingNode is one node's deltas over one burst.
type SizingNode struct {
	Name        string  `json:"name"`
	Shard       int     `json:"shard"`
	CPUUS       float64 `json:"cpu_us"`
	IdleCPUUS   float64 `json:"idle_cpu_us"`
	Calls       int64   `json:"calls"`
	CallUsec    int64   `json:"call_usec"`
	BusReceived int64   `json:"bus_received"`
}

// SizingBroadcast is the per-node cost per message that shard count cannot reduce at one
// shard count: classic minus sharded per-node cost.
type SizingBroadcast struct {
	Shards      int     `json:"shards"`
	PerNodeUS   float64 `json:"per_node_us"`
	ShareOfCost float64 `json:"share_of_classic"` // of classic's per-node cost
}

// SizingBar is one sizing bar (spec 000 §Open Decisions D1), judged on the measured ratio.
type SizingBar struct {
	Name  string  `json:"name"`
	What  string  `json:"what"`
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Met   bool    `json:"met"`
}

// Point returns the point for mode at shards.
func (s Sizing) Point(shards int, mode string) (SizingPoint, bool) {
	for _, p := range s.Points {
		if p.Shards == shards && p.Mode == mode {
			return p, true
		}
	}
	return SizingPoint{}, false
}

// sizingColors are the series colours, by mode, in Modes order.
var sizingColors = []string{"#cf222e", "#1a7f37", "#0969da", "#8250df", "#9a6700", "#57606a"}

// SVG renders per-node µs per message against shard count: one line per mode with the
// repeats' min–max as whiskers, and the dashed ideal 1/n curve through the first shard
// count's sharded cost (A4: sharded and keyed traffic divides, broadcast does not).
func (s Sizing) SVG() template.HTML {
	base, ok := s.Point(s.minShards(), "sharded")
	var ideal func(n float64) float64
	if ok {
		ideal = func(n float64) float64 { return base.PerNodeUS * float64(s.minShards()) / n }
	}
	return s.chart("µs main-thread CPU per message per node", func(p SizingPoint) (v, lo, hi float64) {
		return p.PerNodeUS, p.PerNodeMinUS, p.PerNodeMaxUS
	}, ideal, "ideal 1/n (sharded)")
}

// RatioSVG renders each mode's per-node cost relative to its own cost at the smallest
// shard count — the scaling curve itself: shardable traffic follows the dashed 1/n, a
// broadcast stays near 1.
func (s Sizing) RatioSVG() template.HTML {
	n0 := s.minShards()
	return s.chart(fmt.Sprintf("per-node cost ÷ cost at %d shard(s)", n0), func(p SizingPoint) (v, lo, hi float64) {
		b, ok := s.Point(n0, p.Mode)
		if !ok || b.PerNodeUS == 0 {
			return 0, 0, 0
		}
		return p.PerNodeUS / b.PerNodeUS, p.PerNodeMinUS / b.PerNodeUS, p.PerNodeMaxUS / b.PerNodeUS
	}, func(n float64) float64 { return float64(n0) / n }, fmt.Sprintf("ideal %d/n", n0))
}

func (s Sizing) minShards() int {
	if len(s.Shards) == 0 {
		return 1
	}
	m := s.Shards[0]
	for _, n := range s.Shards {
		m = min(m, n)
	}
	return m
}

// chart draws one line per mode of val against shard count, with an optional dashed ideal
// curve. Self-contained SVG; no script.
func (s Sizing) chart(yLabel string, val func(SizingPoint) (v, lo, hi float64), ideal func(n float64) float64, idealLabel string) template.HTML {
	const w, h, left, right, top, bottom = 720, 340, 64, 150, 20, 48
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	shards := append([]int(nil), s.Shards...)
	sort.Ints(shards)
	if len(shards) == 0 || len(s.Points) == 0 {
		return ""
	}
	ymax := 0.0
	for _, p := range s.Points {
		_, _, hi := val(p)
		ymax = math.Max(ymax, hi)
	}
	ymax = niceCeil(ymax)
	lo, hi := float64(shards[0]), float64(shards[len(shards)-1])
	x := func(n float64) float64 {
		if hi == lo {
			return float64(left) + pw/2
		}
		return float64(left) + (n-lo)/(hi-lo)*pw
	}
	y := func(v float64) float64 { return float64(top) + ph - v/ymax*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s by shard count" font-family="system-ui, sans-serif" font-size="12">`,
		w, h, w, h, template.HTMLEscapeString(yLabel))
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#d8dee4"/>`, left, float64(left)+pw, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#59636e">%s</text>`, left-6, y(v)+4, trimFloat(v))
	}
	for _, n := range shards {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#eef1f4"/>`, x(float64(n)), x(float64(n)), top, float64(top)+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#59636e">%d</text>`, x(float64(n)), float64(top)+ph+16, n)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#1f2328">shards (primaries)</text>`, float64(left)+pw/2, h-8)
	fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" fill="#1f2328">%s</text>`, float64(top)+ph/2, template.HTMLEscapeString(yLabel))
	if ideal != nil && hi > lo {
		var pts []string
		for i := 0; i <= 50; i++ {
			n := lo + float64(i)/50*(hi-lo)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(n), y(ideal(n))))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#8c959f" stroke-dasharray="5 4"/>`, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#8c959f" stroke-dasharray="5 4"/><text x="%.1f" y="%d" fill="#59636e">%s</text>`,
			float64(left)+pw+10, float64(left)+pw+24, top+8+len(s.Modes)*18, top+8+len(s.Modes)*18, float64(left)+pw+30, top+12+len(s.Modes)*18, template.HTMLEscapeString(idealLabel))
	}
	for i, m := range s.Modes {
		color := sizingColors[i%len(sizingColors)]
		var pts []string
		for _, n := range shards {
			p, ok := s.Point(n, m)
			if !ok {
				continue
			}
			v, vlo, vhi := val(p)
			xn := x(float64(n))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xn, y(v)))
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-opacity=".5"/>`, xn, xn, y(vlo), y(vhi), color)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s at %d shards: %.3f (repeats %.3f–%.3f)</title></circle>`,
				xn, y(v), color, template.HTMLEscapeString(m), n, v, vlo, vhi)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), color)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="14" height="3" fill="%s"/><text x="%.1f" y="%d" fill="#1f2328">%s</text>`,
			float64(left)+pw+10, top+6+i*18, color, float64(left)+pw+30, top+10+i*18, template.HTMLEscapeString(m))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from numbers and escaped names only
}

// niceCeil rounds v up to 1, 2 or 5 × 10^k (an axis maximum).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*e {
			return m * e
		}
	}
	return 10 * e
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

var sizingTemplate = template.Must(template.New("sizing").Funcs(template.FuncMap{
	"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"f0":  func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"pct": func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>slotgate size — fan-out sizing</title>
<style>
body { margin: 0; color: #1f2328; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 28px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .08em; color: #59636e; margin: 28px 0 8px; }
.kicker { color: #59636e; font-size: 13px; margin: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: right; padding: 4px 8px; border-bottom: 1px solid #d8dee4; white-space: nowrap; }
th:first-child, td:first-child, th.l, td.l { text-align: left; }
th { color: #59636e; font-weight: 600; }
.met { color: #1a7f37; font-weight: 700; }
.outside { color: #cf222e; font-weight: 700; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
ul { padding-left: 20px; }
</style>
</head>
<body><main>
<h1>Fan-out sizing</h1>
<p class="kicker">spec 000 §Open Decisions D1 · Axiom A4 — {{.S.Server}} · {{.S.Host}} · slotgate {{.S.Version}} · {{.S.Generated.Format "2006-01-02 15:04:05 MST"}}</p>
<p class="kicker">target {{.S.Rate}} msg/s for {{f0 .S.DurationMS}} ms per burst · {{.S.Repeats}} repeat(s), medians shown · {{.S.Senders}} pipelined sender(s) per node · shards {{.S.Shards}}</p>

<h2>Bars (measured, not asserted)</h2>
<table>
<tr><th>bar</th><th class="l">what</th><th>measured</th><th>accepted range</th><th>verdict</th></tr>
{{range .S.Bars}}<tr><td><code>{{.Name}}</code></td><td class="l">{{.What}}</td><td>{{printf "%.3f" .Value}}</td><td>{{printf "%.3f" .Low}} – {{printf "%.3f" .High}}</td><td class="{{if .Met}}met{{else}}outside{{end}}">{{if .Met}}within{{else}}outside{{end}}</td></tr>
{{else}}<tr><td colspan="5">no bar computable from these shard counts (needs 1 and 3 or 6)</td></tr>{{end}}
</table>

<h2>Per-node cost per message</h2>
{{.SVG}}

<h2>Scaling curve: per-node cost relative to the smallest shard count</h2>
{{.Ratio}}

<h2>Every point</h2>
<table>
<tr><th>shards</th><th class="l">mode</th><th class="l">command</th><th>µs/msg/node</th><th>repeats min–max</th><th>µs/msg cluster</th><th>µs/msg hottest</th><th>cmd µs/call</th><th>bus/msg</th><th>msg/s reached</th><th>messages</th><th>errors</th></tr>
{{range .S.Points}}<tr><td>{{.Shards}}</td><td class="l">{{.Mode}}</td><td class="l"><code>{{.Command}}</code></td><td>{{f2 .PerNodeUS}}</td><td>{{f2 .PerNodeMinUS}}–{{f2 .PerNodeMaxUS}}</td><td>{{f2 .TotalUS}}</td><td>{{f2 .HottestUS}}</td><td>{{f2 .CallUS}}</td><td>{{f2 .BusPerMessage}}</td><td>{{f0 .AchievedRate}}</td><td>{{.Messages}}</td><td>{{.Errors}}</td></tr>
{{end}}</table>

<h2>The broadcast term (classic − sharded, per node)</h2>
<table>
<tr><th>shards</th><th>µs/msg/node shard count cannot remove</th><th>share of classic's per-node cost</th></tr>
{{range .S.Broadcast}}<tr><td>{{.Shards}}</td><td>{{f2 .PerNodeUS}}</td><td>{{pct .ShareOfCost}}</td></tr>
{{end}}</table>

<h2>How it was measured</h2>
<ul>{{range .S.Notes}}<li>{{.}}</li>{{end}}</ul>
</main></body></html>
`))

// WriteSizingHTML writes the sizing result as one self-contained page: bars, an inline SVG
// chart, every point and the broadcast term. No script, no fetched assets.
func WriteSizingHTML(w io.Writer, s Sizing) error {
	if err := sizingTemplate.Execute(w, struct {
		S          Sizing
		SVG, Ratio template.HTML
	}{s, s.SVG(), s.RatioSVG()}); err != nil {
		return fmt.Errorf("render sizing html: %w", err)
	}
	return nil
}
