package audit

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// AlertRule is one operator alert on an audit fan-out gauge (spec 002
// §4.1 Failure: "Operator alerts on marconi_redis_writer_lag_seconds and
// marconi_audit_queue_depth"), as a Prometheus rule reads it: the gauge of
// a tenant above Threshold at every evaluation for For fires; an
// evaluation at or under it clears.
type AlertRule struct {
	Name      string
	Metric    string
	Threshold float64
	For       time.Duration
}

// Alert names of DefaultAlertRules.
const (
	AlertQueueDepth = "MarconiAuditQueueDepth"
	AlertWriterLag  = "MarconiRedisWriterLag"
)

// DefaultAlertRules are the two §4.1 writer alerts for a queue sized by
// c at burstRate signals per second. The §3.6 sizing formula
// (max_entries ≥ burst_rate × max_redis_writer_lag_seconds ×
// safety_factor, safety_factor ≥ 2) puts both thresholds at the edge of
// the headroom the safety factor reserves: depth above max_entries / 2,
// writer lag above max_entries / (2 × burst_rate) — the lag the sizing was
// made for. From there the queue has max_entries / 2 entries, half the
// sizing's lag, before it overwrites (the §3.6 loss event); forFor is
// the rules' for-duration and must leave the evaluation room inside that.
func DefaultAlertRules(c QueueConfig, burstRate float64, forFor time.Duration) []AlertRule {
	return []AlertRule{
		{Name: AlertQueueDepth, Metric: MetricQueueDepth, Threshold: float64(c.MaxEntries) / 2, For: forFor},
		{Name: AlertWriterLag, Metric: MetricWriterLag, Threshold: float64(c.MaxEntries) / (2 * burstRate), For: forFor},
	}
}

// AlertEvaluator evaluates rules against a registry, one tenant at a
// time, keeping each rule's pending-since as a Prometheus rule manager
// does.
type AlertEvaluator struct {
	Gatherer prometheus.Gatherer
	Rules    []AlertRule
	since    map[string]time.Time // rule/tenant → first evaluation above the threshold
}

// Eval evaluates every rule for tenant at now and returns the gauge value
// each read and whether it is firing, by rule name.
func (e *AlertEvaluator) Eval(tenant string, now time.Time) (values map[string]float64, firing map[string]bool) {
	if e.since == nil {
		e.since = map[string]time.Time{}
	}
	gauges := e.read(tenant)
	values, firing = map[string]float64{}, map[string]bool{}
	for _, r := range e.Rules {
		v := gauges[r.Metric]
		values[r.Name] = v
		k := r.Name + "/" + tenant
		if v <= r.Threshold {
			delete(e.since, k)
			continue
		}
		s, ok := e.since[k]
		if !ok {
			s = now
			e.since[k] = s
		}
		firing[r.Name] = now.Sub(s) >= r.For
	}
	return values, firing
}

func (e *AlertEvaluator) read(tenant string) map[string]float64 {
	out := map[string]float64{}
	families, err := e.Gatherer.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" && l.GetValue() == tenant && m.Gauge != nil {
					out[f.GetName()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}
