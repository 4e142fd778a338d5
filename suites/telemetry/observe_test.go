package telemetry_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/telemetry"
)

// scrape reads m the way a Prometheus server does: an HTTP GET of its
// handler on a real socket, parsed from the text exposition format.
func scrape(ctx context.Context, m *telemetry.Metrics) check.TelemetryScrape {
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		return check.TelemetryScrape{Err: err.Error()}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return check.TelemetryScrape{Err: fmt.Sprintf("scrape: %v", err)}
	}
	defer resp.Body.Close()
	out := check.TelemetryScrape{Status: resp.StatusCode}
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
			out.Samples = append(out.Samples, check.TelemetrySample{Name: name, Labels: labels, Value: sampleValue(f.GetType(), m)})
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
	default:
		return m.GetUntyped().GetValue()
	}
}

// mustScrape is scrape for snapshots the checks read counts from: a failed
// scrape there is the harness's problem, not a verdict.
func mustScrape(ctx context.Context, m *telemetry.Metrics) []check.TelemetrySample {
	GinkgoHelper()
	s := scrape(ctx, m)
	Expect(s.Err).To(BeEmpty())
	Expect(s.Status).To(Equal(http.StatusOK))
	return s.Samples
}

// cmdStat is one command's INFO commandstats counters.
type cmdStat struct{ Calls, Rejected, Failed float64 }

// serverStats is one node's INFO commandstats and errorstats.
type serverStats struct {
	Commands map[string]cmdStat // by lowercase command name
	Errors   map[string]float64 // by error code
}

// statsOf reads every primary's stats, keyed by the address clients use
// (the proxy address the node announces).
func statsOf(ctx context.Context, t *fixtures.Topology) map[string]serverStats {
	GinkgoHelper()
	out := map[string]serverStats{}
	for _, n := range t.Primaries() {
		cs, err := n.Info(ctx, "commandstats")
		Expect(err).NotTo(HaveOccurred())
		es, err := n.Info(ctx, "errorstats")
		Expect(err).NotTo(HaveOccurred())
		st := serverStats{Commands: map[string]cmdStat{}, Errors: map[string]float64{}}
		for k, v := range cs {
			name, ok := strings.CutPrefix(k, "cmdstat_")
			if !ok {
				continue
			}
			f := fields(v)
			st.Commands[name] = cmdStat{Calls: f["calls"], Rejected: f["rejected_calls"], Failed: f["failed_calls"]}
		}
		for k, v := range es {
			if code, ok := strings.CutPrefix(k, "errorstat_"); ok {
				st.Errors[code] = fields(v)["count"]
			}
		}
		out[n.Addr()] = st
	}
	return out
}

// fields parses "calls=3,usec=22,..." into numbers.
func fields(s string) map[string]float64 {
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out
}

// delta is after − before for one node and command.
func (s cmdStat) minus(b cmdStat) cmdStat {
	return cmdStat{Calls: s.Calls - b.Calls, Rejected: s.Rejected - b.Rejected, Failed: s.Failed - b.Failed}
}

// serverOwners reads the slot map over a direct admin connection: the
// owner's announced (proxy) address of every slot.
func serverOwners(ctx context.Context, t *fixtures.Topology) []string {
	GinkgoHelper()
	v, err := t.Primaries()[0].Do(ctx, "CLUSTER", "SLOTS")
	Expect(err).NotTo(HaveOccurred())
	owners, err := telemetry.ParseClusterSlots(v)
	Expect(err).NotTo(HaveOccurred())
	return owners
}

// nodeAddrs is every address a node label may legitimately carry.
func nodeAddrs(t *fixtures.Topology) map[string]bool {
	out := map[string]bool{}
	for _, a := range t.Addrs() {
		out[a] = true
	}
	return out
}
