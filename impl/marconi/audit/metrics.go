package audit

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the audit fan-out (spec 002 §9, "Audit queue + fanout
// counters"), plus the counters the three-way ledger reads. Every one is
// labelled by tenant.
const (
	// MetricQueueDepth is marconi_audit_queue_depth{tenant}.
	MetricQueueDepth = "marconi_audit_queue_depth"
	// MetricQueueBytes is the queue's estimated footprint (max_bytes).
	MetricQueueBytes = "marconi_audit_queue_bytes"
	// MetricQueueOverwrite is marconi_audit_queue_overwrite_total{tenant,
	// reason}: every entry the queue lost, whatever the reason (the §3.6
	// loss event); reason is a DropReason.
	MetricQueueOverwrite = "marconi_audit_queue_overwrite_total"
	// MetricWriterLag is marconi_redis_writer_lag_seconds{tenant}: the age
	// of the oldest entry not yet in the stream (0 when none).
	MetricWriterLag = "marconi_redis_writer_lag_seconds"
	// MetricWriterErrors is marconi_redis_writer_errors_total{tenant,reason}.
	MetricWriterErrors = "marconi_redis_writer_errors_total"
	// MetricWriterAppended counts entries the writer appended to the stream
	// (a retried batch counts once: the append script skips what the
	// stored offset already covers).
	MetricWriterAppended = "marconi_redis_writer_appended_total"
	// MetricArchiverLag is marconi_pg_archiver_lag_seconds{tenant}: the age
	// (by stream ID) of the entry the archiver is writing or last wrote; 0
	// once a read finds nothing new.
	MetricArchiverLag = "marconi_pg_archiver_lag_seconds"
	// MetricArchiverErrors is marconi_pg_archiver_errors_total{tenant,reason}.
	MetricArchiverErrors = "marconi_pg_archiver_errors_total"
	// MetricArchiverArchived counts entries committed to PostgreSQL and
	// acknowledged.
	MetricArchiverArchived = "marconi_pg_archiver_archived_total"
	// MetricArchiverRecovered counts pending entries this archiver claimed
	// from a dead consumer (XAUTOCLAIM) or re-read from its own pending list.
	MetricArchiverRecovered = "marconi_pg_archiver_recovered_total"
)

// Metrics holds the audit fan-out's Prometheus collectors. Each pipeline
// (or each simulated process) has its own, so several live in one test
// process without colliding.
type Metrics struct {
	gatherer prometheus.Gatherer

	queueDepth, queueBytes, writerLag, archiverLag *prometheus.GaugeVec
	overwrite, writerErrors, writerAppended        *prometheus.CounterVec
	archiverErrors, archived, recovered            *prometheus.CounterVec
}

// NewMetrics registers the collectors on reg, or on a fresh registry when
// reg is nil (Gatherer then reads it).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, m.gatherer = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		m.gatherer = g
	}
	tenant := []string{"tenant"}
	withReason := []string{"tenant", "reason"}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, tenant)
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m.queueDepth = gauge(MetricQueueDepth, "Entries in the in-memory audit queue (spec 002 §3.6).")
	m.queueBytes = gauge(MetricQueueBytes, "Estimated bytes held by the in-memory audit queue (max_bytes).")
	m.writerLag = gauge(MetricWriterLag, "Age of the oldest audit entry not yet appended to the Redis Stream.")
	m.archiverLag = gauge(MetricArchiverLag, "Age of the stream entry the PG archiver is writing or last wrote.")
	m.overwrite = counter(MetricQueueOverwrite, "Audit entries lost by the in-memory queue (the §3.6 loss event).", withReason)
	m.writerErrors = counter(MetricWriterErrors, "Redis Stream writer errors.", withReason)
	m.writerAppended = counter(MetricWriterAppended, "Audit entries appended to the Redis Stream.", tenant)
	m.archiverErrors = counter(MetricArchiverErrors, "PG archiver errors.", withReason)
	m.archived = counter(MetricArchiverArchived, "Stream entries committed to PostgreSQL and acknowledged.", tenant)
	m.recovered = counter(MetricArchiverRecovered, "Pending stream entries recovered after an archiver crash.", tenant)
	reg.MustRegister(m.queueDepth, m.queueBytes, m.writerLag, m.archiverLag, m.overwrite,
		m.writerErrors, m.writerAppended, m.archiverErrors, m.archived, m.recovered)
	return m
}

// Gatherer is where the metrics can be scraped, or nil when NewMetrics was
// given a Registerer that cannot gather.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.gatherer }

// tenantMetrics are one tenant's label-bound children, resolved once so the
// hot path (Offer) pays no label lookup.
type tenantMetrics struct {
	depth, bytes prometheus.Gauge
	drops        map[DropReason]prometheus.Counter
}

func (m *Metrics) forTenant(tenant string) tenantMetrics {
	tm := tenantMetrics{
		depth: m.queueDepth.WithLabelValues(tenant),
		bytes: m.queueBytes.WithLabelValues(tenant),
		drops: map[DropReason]prometheus.Counter{},
	}
	for _, r := range DropReasons {
		tm.drops[r] = m.overwrite.WithLabelValues(tenant, string(r))
	}
	return tm
}
