package traffic

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/slotgate/slotgate/history"
)

// Scrape reads url the way a Prometheus server does: an HTTP GET on a real
// socket, parsed from the text exposition format, so the wire is judged
// with the numbers. A histogram's sample is its count. A non-200 answer
// is recorded with its status and no samples.
func Scrape(ctx context.Context, c *http.Client, url string) history.TelemetryScrape {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return history.TelemetryScrape{Err: err.Error()}
	}
	resp, err := c.Do(req)
	if err != nil {
		return history.TelemetryScrape{Err: fmt.Sprintf("scrape: %v", err)}
	}
	defer resp.Body.Close()
	out := history.TelemetryScrape{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		out.Err = "scrape answered " + resp.Status
		return out
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		out.Err = fmt.Sprintf("parse scrape: %v", err)
		return out
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out.Samples = append(out.Samples, history.TelemetrySample{Name: name, Labels: labels, Value: sampleValue(f.GetType(), m)})
		}
	}
	return out
}

func sampleValue(t dto.MetricType, m *dto.Metric) float64 {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}
