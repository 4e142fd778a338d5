package sizing

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Run with: go test -run '^$' -bench FanoutCurve -benchtime 1x ./sizing/
// (`slotgate size` is the command form, with JSON and HTML output.) One run measures the
// whole curve and reports its ratios; the sizing bar is reported, never asserted.
func BenchmarkFanoutCurve(b *testing.B) {
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		curve, err := Measure(ctx, Options{Seed: 5})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			continue
		}
		b.Logf("fan-out curve (medians, idle rate subtracted):\n%s", curve.Table())
		for _, bar := range curve.Bars() {
			b.ReportMetric(bar.Value, bar.Name)
			b.Logf("%s = %.3f (range %.3f–%.3f, met=%t)", bar.Name, bar.Value, bar.Low, bar.High, bar.Met)
		}
		for _, n := range curve.Shards() {
			for _, m := range curve.Modes {
				if p, ok := curve.At(n, m); ok {
					b.ReportMetric(us(p.PerNode()), fmt.Sprintf("%s_us/msg/node_%d", m, n))
				}
			}
		}
	}
}
