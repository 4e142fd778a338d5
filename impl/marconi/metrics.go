package marconi

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Hook names one Stage 2 invalidation hook (spec 002 §8 Stage 2, "Hook
// list (canonical, must all exist)"); it is the hook label of the
// invalidator counters (§9).
type Hook string

const (
	HookRegister       Hook = "on_register"        // controller_service.register, after SessionStore.register
	HookDeregister     Hook = "on_deregister"      // controller_service.deregister_session, after SessionStore.release
	HookMasterChange   Hook = "on_master_change"   // handoff_master / claim_master, after the master flag flip
	HookHeartbeat      Hook = "on_heartbeat"       // stamp_heartbeat / stamp_engagement: freshness only
	HookSessionExpired Hook = "on_session_expired" // KeyspaceReaper: Redis TTL expiry (the sweeper, or keyspace notifications)
	HookWSConnect      Hook = "on_ws_connect"      // session_stream handler attach
	HookWSDisconnect   Hook = "on_ws_disconnect"   // WS disconnect
)

// Hooks lists every Stage 2 hook in the spec's order.
var Hooks = []Hook{HookRegister, HookDeregister, HookMasterChange, HookHeartbeat, HookSessionExpired, HookWSConnect, HookWSDisconnect}

// metrics is every hot-path, invalidator and obligation metric of spec 002
// §9, on the instance's own registry (two instances in one process — a
// restart drill — never share counters). The audit queue and fan-out
// metrics belong to package audit.
type metrics struct {
	received     *prometheus.CounterVec   // marconi_signals_received_total{tenant,signal_type}
	delivered    *prometheus.CounterVec   // marconi_signals_delivered_total{tenant,signal_type,outcome}
	acked        *prometheus.CounterVec   // marconi_signals_acked_total{tenant,signal_type,ack_kind}
	sendDuration *prometheus.HistogramVec // marconi_signal_send_duration_seconds{tenant}
	tableSize    *prometheus.GaugeVec     // marconi_routing_table_size{tenant}
	hits         *prometheus.CounterVec   // marconi_routing_cache_hits_total{tenant}
	misses       *prometheus.CounterVec   // marconi_routing_cache_misses_total{tenant}

	hookCalls  *prometheus.CounterVec // marconi_invalidator_calls_total{hook}
	hookErrors *prometheus.CounterVec // marconi_invalidator_errors_total{hook,reason}

	obligationsOpen  *prometheus.GaugeVec   // marconi_obligations_open{tenant,kind}
	durable          *prometheus.CounterVec // marconi_obligations_durable_total{tenant,kind}
	degraded         *prometheus.CounterVec // marconi_obligations_degraded_not_durable_total{tenant,kind}
	slaViolations    *prometheus.CounterVec // marconi_obligation_sla_violation_total{tenant,kind,sla}
	pendingExpired   *prometheus.CounterVec // marconi_pending_expired_total{tenant} (not in §9: a pending signal whose TTL ran out)
	warmupSessions   prometheus.Gauge       // marconi_warmup_sessions (not in §9: sessions rehydrated at start, §6)
	warmupSeconds    prometheus.Gauge       // marconi_warmup_duration_seconds (not in §9)
	expiryListenErrs prometheus.Counter     // marconi_keyspace_listener_errors_total (not in §9)

	mutant MetricsMutant // a known-bad instrument (negative controls only)
}

// sendBuckets resolve the §2.1 target (p99 < 5 ms) and the sub-millisecond
// range a same-process send lives in.
var sendBuckets = []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3, 1}

func newMetrics(reg prometheus.Registerer, mutant MetricsMutant, t *tables) *metrics {
	m := &metrics{mutant: mutant,
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_signals_received_total",
			Help: "Signals received at the send API entry (spec 002 §9)."}, []string{"tenant", "signal_type"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_signals_delivered_total",
			Help: "Delivery decisions by outcome: pushed, queued_offline, no_subscriber, dropped (§9)."}, []string{"tenant", "signal_type", "outcome"}),
		acked: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_signals_acked_total",
			Help: "Final-delivery evidence received from receivers (§9)."}, []string{"tenant", "signal_type", "ack_kind"}),
		sendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "marconi_signal_send_duration_seconds",
			Help: "send_signal from API entry to the delivery decision (§2.1 target p99 < 5 ms).", Buckets: sendBuckets}, []string{"tenant"}),
		tableSize: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "marconi_routing_table_size",
			Help: "Routing table entries (§3.1)."}, []string{"tenant"}),
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_routing_cache_hits_total",
			Help: "Routing lookups that resolved a live session."}, []string{"tenant"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_routing_cache_misses_total",
			Help: "Routing lookups that resolved nothing (or only a session past its TTL)."}, []string{"tenant"}),
		hookCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_invalidator_calls_total",
			Help: "Stage 2 invalidation hook calls (§9)."}, []string{"hook"}),
		hookErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_invalidator_errors_total",
			Help: "Non-fatal hook errors; non-zero in steady state is a paging incident (§9)."}, []string{"hook", "reason"}),
		obligationsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "marconi_obligations_open",
			Help: "Open obligations in the in-memory index (§3.4)."}, []string{"tenant", "kind"}),
		durable: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_obligations_durable_total",
			Help: "Obligations whose envelope the audit queue kept."}, []string{"tenant", "kind"}),
		degraded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_obligations_degraded_not_durable_total",
			Help: "Obligations whose envelope the audit queue refused (or with the audit queue off)."}, []string{"tenant", "kind"}),
		slaViolations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_obligation_sla_violation_total",
			Help: "Obligations past their ack or terminal SLA (§3.4 sweepers)."}, []string{"tenant", "kind", "sla"}),
		pendingExpired: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "marconi_pending_expired_total",
			Help: "Pending signals dropped at their TTL (§3.5)."}, []string{"tenant"}),
		warmupSessions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "marconi_warmup_sessions",
			Help: "Sessions rehydrated from the SessionStore at start (§6)."}),
		warmupSeconds: prometheus.NewGauge(prometheus.GaugeOpts{Name: "marconi_warmup_duration_seconds",
			Help: "Duration of the start-up rehydration (§6: sub-second)."}),
		expiryListenErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "marconi_keyspace_listener_errors_total",
			Help: "Keyspace-notification listener failures (subscribe or undecodable events)."}),
	}
	reg.MustRegister(m.received, m.delivered, m.acked, m.sendDuration, m.hits, m.misses,
		m.hookCalls, m.hookErrors, m.pendingExpired, m.warmupSessions, m.warmupSeconds, m.expiryListenErrs)
	if mutant == MetricsDuplicateSeries {
		reg.MustRegister(tableSizeCollector{t: t, desc: prometheus.NewDesc("marconi_routing_table_size", "Routing table entries (§3.1).", []string{"tenant"}, nil)})
	} else {
		reg.MustRegister(m.tableSize)
	}
	if mutant != MetricsObligationsUnregistered {
		reg.MustRegister(m.obligationsOpen, m.durable, m.degraded, m.slaViolations)
	}
	// Every hook's call counter exists from the start, so a hook that never
	// ran reads 0 rather than missing.
	for _, h := range Hooks {
		m.hookCalls.WithLabelValues(string(h))
	}
	return m
}

// MetricSum gathers the instance's registry and sums the samples of metric
// name whose labels include every pair of match: a counter's or gauge's
// value, a histogram's sample count. Reports read §9 metrics through it.
func (m *Mesh) MetricSum(name string, match map[string]string) float64 {
	families, err := m.registry.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range match {
				if labels[k] != v {
					continue series
				}
			}
			switch {
			case s.Counter != nil:
				sum += s.GetCounter().GetValue()
			case s.Gauge != nil:
				sum += s.GetGauge().GetValue()
			case s.Histogram != nil:
				sum += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// MetricNames lists the metric families the instance registers.
func (m *Mesh) MetricNames() []string {
	families, _ := m.registry.Gather()
	out := make([]string, 0, len(families))
	for _, f := range families {
		out = append(out, f.GetName())
	}
	return out
}
