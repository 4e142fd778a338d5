// Package telemetry is the relay's client-side instrumentation: Prometheus
// metrics per shard (node), per slot and per channel, taken at the client
// seam (impl/client's Pool and Subscriber), next to the fencing phase gauge.
//
// Spec 000 §Conformance, Telemetry: "Per-shard/slot/channel metrics exist
// before G5: aggregate CPU cannot attribute a hot slot, and the phase gauge
// (buzz_fencing_phase) feeds the Deployment Gate." A command's slot is
// computed with impl/slot from its first declared key (the slot the client
// routes by); its node is the slot's owner in a slot map read with CLUSTER
// SLOTS and corrected by every MOVED the seam sees (a MOVED names the new
// owner), as a cluster client keeps its own.
//
// What the seam cannot see: both client libraries follow most MOVED/ASK
// replies inside their own redirect loop and hand back only what exceeds it
// (go-redis: MaxRedirects, TRYAGAIN counted against it; valkey-go: TRYAGAIN
// for commands it does not retry). The redirect counter counts the replies
// that reach the seam, which is what the relay's call path must absorb; the
// server's own errorstats count every redirect it sent.
//
// Every Metrics has its own registry, never the global one, so many
// instruments (and the known-bad mutants of the telemetry row) can live in
// one process.
package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/slotgate/slotgate/impl/fencing"
)

// Metric family names. Counters carry the labels listed with them.
const (
	// CommandsName counts every keyed command sent through the pool
	// (labels node, slot, command), whatever its outcome.
	CommandsName = "buzz_redis_commands_total"
	// KeylessName counts commands without a declared key (label command),
	// which the client library routes to a node of its choosing.
	KeylessName = "buzz_redis_keyless_commands_total"
	// RedirectsName counts MOVED, ASK and TRYAGAIN replies that reached the
	// seam (labels node, slot, command, kind, target): the server did not
	// execute the command there.
	RedirectsName = "buzz_redis_redirects_total"
	// ErrorsName counts every other failed command (labels node, slot,
	// command, kind): a server error reply by its code, or "network" for a
	// failure without a reply, whose outcome is unknown.
	ErrorsName = "buzz_redis_errors_total"
	// SlotMapRefreshesName counts slot-map reads (label outcome ok|error).
	SlotMapRefreshesName = "buzz_redis_slotmap_refreshes_total"
	// MessagesName counts pub/sub deliveries (labels channel, kind); a
	// pattern delivery is labelled with its pattern.
	MessagesName = "buzz_pubsub_messages_total"
	// GapsName counts subscription gaps (labels channel, kind): a
	// subscription the server ended (dropped, e.g. its slot migrated) or
	// one the client library re-sent after reconnecting (resubscribed);
	// messages published meanwhile were lost.
	GapsName = "buzz_pubsub_gaps_total"
)

// Label values used where a label does not apply.
const (
	// NodeUnknown labels a command whose slot has no owner in the slot map.
	NodeUnknown = "unknown"
	// TargetNone labels a TRYAGAIN, which names no other node.
	TargetNone = "none"
	// KindNetwork labels a failure without a server reply.
	KindNetwork = "network"
)

// Mutant selects a known-bad instrument, for the telemetry row's negative
// controls. The zero value is the correct instrument.
type Mutant string

const (
	// MutantNone is the correct instrument.
	MutantNone Mutant = ""
	// MutantWholeKeySlot attributes a command to CRC16 of its whole first
	// key, ignoring the hash tag: keys of one tag (one real slot) spread
	// over many slots and nodes in the metrics, so a hot tag is invisible.
	MutantWholeKeySlot Mutant = "whole-key-slot"
)

// Options configures Metrics.
type Options struct {
	// Pod is a constant "pod" label on every series.
	Pod string
	// Phase, when set, is the pod's fencing phase gauge (buzz_fencing_phase,
	// spec 000 §Deployment Gate), gathered and served with these metrics.
	Phase  *fencing.PodMetrics
	Mutant Mutant
}

// Metrics is one pod's client telemetry.
type Metrics struct {
	registry *prometheus.Registry
	gatherer prometheus.Gatherer
	mutant   Mutant

	commands  *prometheus.CounterVec
	keyless   *prometheus.CounterVec
	redirects *prometheus.CounterVec
	errors    *prometheus.CounterVec
	refreshes *prometheus.CounterVec
	messages  *prometheus.CounterVec
	gaps      *prometheus.CounterVec
}

// New registers the client metrics on a fresh registry.
func New(o Options) *Metrics {
	constLabels := prometheus.Labels{}
	if o.Pod != "" {
		constLabels["pod"] = o.Pod
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: constLabels}, labels)
	}
	m := &Metrics{
		registry:  prometheus.NewRegistry(),
		mutant:    o.Mutant,
		commands:  counter(CommandsName, "Keyed commands sent, by the owner node and slot of their first key.", "node", "slot", "command"),
		keyless:   counter(KeylessName, "Commands without a declared key.", "command"),
		redirects: counter(RedirectsName, "MOVED/ASK/TRYAGAIN replies that reached the client seam.", "node", "slot", "command", "kind", "target"),
		errors:    counter(ErrorsName, "Failed commands other than redirects, by error code (network: no reply).", "node", "slot", "command", "kind"),
		refreshes: counter(SlotMapRefreshesName, "Slot-map reads (CLUSTER SLOTS).", "outcome"),
		messages:  counter(MessagesName, "Pub/sub deliveries, by channel (pattern for a pattern delivery).", "channel", "kind"),
		gaps:      counter(GapsName, "Subscriptions the server dropped or the client library re-sent: messages in between were lost.", "channel", "kind"),
	}
	m.registry.MustRegister(m.commands, m.keyless, m.redirects, m.errors, m.refreshes, m.messages, m.gaps)
	m.gatherer = m.registry
	if o.Phase != nil {
		m.gatherer = prometheus.Gatherers{m.registry, o.Phase.Registry}
	}
	return m
}

// Gatherer gathers every metric of the pod, the phase gauge included.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.gatherer }

// Handler serves the pod's metrics in the Prometheus exposition format, as
// a scrape reads them. Collection errors are served as HTTP 500.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// Mutant reports which instrument this is.
func (m *Metrics) Mutant() Mutant { return m.mutant }
