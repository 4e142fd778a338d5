package marconi

import (
	"github.com/prometheus/client_golang/prometheus"
)

// MetricsMutant names a known-bad §9 instrument (spec 002 §9): the mesh
// behaves exactly as the reference one — every send, hook and obligation
// does the same thing — and only what it reports is wrong. Each is a bug an
// instrument really gets (a label bound from an empty field, a counter
// incremented on two paths, a gauge nobody decrements, an outcome counted
// before it is known); the marconi-metrics row's negative controls.
// MetricsMutantNone is the reference instrument.
type MetricsMutant string

const (
	MetricsMutantNone MetricsMutant = ""

	// Silently wrong: the scrape succeeds and a number or label is wrong.

	// MetricsReceivedTenantDropped counts marconi_signals_received_total
	// with the tenant label empty: every tenant's sends fall into one
	// series (§9 "per tenant").
	MetricsReceivedTenantDropped MetricsMutant = "metrics/received-tenant-dropped"
	// MetricsDeliveredDoubleCount counts a pushed signal in
	// marconi_signals_delivered_total twice: once where the push succeeds
	// and again where every outcome is counted.
	MetricsDeliveredDoubleCount MetricsMutant = "metrics/delivered-double-count"
	// MetricsOutcomeBeforeDecision counts the delivery outcome as soon as
	// the route resolves: a route found is "pushed", even when the session
	// has no socket and the signal is queued offline.
	MetricsOutcomeBeforeDecision MetricsMutant = "metrics/outcome-before-decision"
	// MetricsOpenNeverDecrements never decrements marconi_obligations_open
	// when a terminal ack closes an obligation.
	MetricsOpenNeverDecrements MetricsMutant = "metrics/open-never-decrements"
	// MetricsAckBeforeLookup counts marconi_signals_acked_total before the
	// obligation is looked up: acks the mesh answers 404 (unknown signal,
	// a repeated terminal ack) are counted too, under empty labels.
	MetricsAckBeforeLookup MetricsMutant = "metrics/ack-counted-before-lookup"
	// MetricsDurationPushedOnly observes marconi_signal_send_duration_seconds
	// only for pushed signals: the histogram's count is not the sends.
	MetricsDurationPushedOnly MetricsMutant = "metrics/duration-pushed-only"
	// MetricsTableSizeStale does not refresh marconi_routing_table_size
	// when a session is deregistered or expires: the gauge never comes
	// down.
	MetricsTableSizeStale MetricsMutant = "metrics/table-size-not-refreshed"
	// MetricsDurableBeforeOffer counts an obligation durable before the
	// audit queue answered: a refused envelope is counted durable, never
	// degraded_not_durable.
	MetricsDurableBeforeOffer MetricsMutant = "metrics/durable-before-offer"
	// MetricsSLARecounted counts an SLA violation at every sweep while it
	// lasts instead of once per obligation and SLA.
	MetricsSLARecounted MetricsMutant = "metrics/sla-recounted"
	// MetricsHookLabelSwapped counts on_heartbeat calls under
	// hook="on_register" (a copy-pasted label).
	MetricsHookLabelSwapped MetricsMutant = "metrics/heartbeat-counted-as-register"

	// Loud: the scrape itself is broken.

	// MetricsDuplicateSeries exports marconi_routing_table_size from an
	// unchecked collector that reads the tables at scrape time and emits
	// one sample per (tenant, project) labelled by tenant only: a tenant
	// with two projects yields two samples with one label set, the
	// registry refuses the gather and /metrics answers 500.
	MetricsDuplicateSeries MetricsMutant = "metrics/duplicate-series-collector"
	// MetricsObligationsUnregistered builds the obligation metrics but
	// never registers them: the four obligation families are missing
	// from /metrics.
	MetricsObligationsUnregistered MetricsMutant = "metrics/obligation-families-unregistered"
)

// MetricsMutants lists every metrics mutant.
var MetricsMutants = []MetricsMutant{
	MetricsReceivedTenantDropped, MetricsDeliveredDoubleCount, MetricsOutcomeBeforeDecision,
	MetricsOpenNeverDecrements, MetricsAckBeforeLookup, MetricsDurationPushedOnly, MetricsTableSizeStale,
	MetricsDurableBeforeOffer, MetricsSLARecounted, MetricsHookLabelSwapped,
	MetricsDuplicateSeries, MetricsObligationsUnregistered,
}

// tableSizeCollector is MetricsDuplicateSeries's gauge: computed from the
// tables at scrape time, one sample per project under the tenant label.
// It describes nothing (an unchecked collector), so registration cannot
// see the clash; only the gather does.
type tableSizeCollector struct {
	t    *tables
	desc *prometheus.Desc
}

func (c tableSizeCollector) Describe(chan<- *prometheus.Desc) {}

func (c tableSizeCollector) Collect(ch chan<- prometheus.Metric) {
	c.t.mu.RLock()
	defer c.t.mu.RUnlock()
	for pk, routes := range c.t.routes {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(len(routes)), pk.tenant)
	}
}
