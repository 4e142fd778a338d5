package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/telemetry"
	"github.com/slotgate/slotgate/traffic"
)

// scrape reads m the way a Prometheus server does: an HTTP GET of its
// handler on a real socket, parsed from the text exposition format.
func scrape(ctx context.Context, m *telemetry.Metrics) history.TelemetryScrape {
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	return traffic.Scrape(ctx, srv.Client(), srv.URL+"/metrics")
}

// mustScrape is scrape for snapshots the checks read counts from: a failed
// scrape there is the harness's problem, not a verdict.
func mustScrape(ctx context.Context, m *telemetry.Metrics) []history.TelemetrySample {
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
