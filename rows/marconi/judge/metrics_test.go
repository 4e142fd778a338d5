package judge

import (
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// metricsFixture is a tiny run: two tenants; acme pushes one signal with
// an obligation acked terminal and queues one offline; bolt's only send
// was refused by the audit queue and carries an unacked obligation whose
// ack SLA passed long before the scrape.
func metricsFixture() (MetricsHistory, history.TelemetryScrape) {
	ms := time.Millisecond
	h := MetricsHistory{
		Sends: []MetricsSend{
			{SignalID: "a1", Tenant: "acme", Kind: "k", Status: 200, Outcome: "pushed", SessionID: "s1", Live: true, AuditKept: true,
				Obligation: "task", TerminalSLA: time.Second, Start: 10 * ms, Done: 11 * ms},
			{SignalID: "a2", Tenant: "acme", Kind: "k", Status: 200, Outcome: "queued_offline", AuditKept: true, Start: 12 * ms, Done: 13 * ms},
			{SignalID: "b1", Tenant: "bolt", Kind: "k", Status: 200, Outcome: "dropped", AuditKept: false,
				Obligation: "reply", AckSLA: time.Second, Start: 14 * ms, Done: 15 * ms},
		},
		Acks: []MetricsAck{
			{SignalID: "a1", AckKind: "terminal", Status: 200, Start: 20 * ms, Done: 21 * ms},
			{SignalID: "a1", AckKind: "terminal", Status: 404, Start: 22 * ms, Done: 23 * ms},
		},
		Frames:      map[string]int{"a1": 1},
		Drained:     map[string]int{"a2": 1},
		Hooks:       map[string]int{"on_register": 1, "on_ws_connect": 2},
		HookErrors:  map[string]int{"on_ws_connect/unknown_session": 1},
		Routes:      map[string]int{"acme": 1},
		Stream:      map[string][]string{"acme": {"a1", "a1"}}, // a1's envelope and its terminal ack's state handoff
		Sweep:       100 * ms,
		ScrapeStart: 2 * time.Second, ScrapeEnd: 2*time.Second + ms,
	}
	smp := func(name string, v float64, kv ...string) history.TelemetrySample {
		l := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return history.TelemetrySample{Name: name, Labels: l, Value: v}
	}
	s := history.TelemetryScrape{Status: 200, Samples: []history.TelemetrySample{
		smp(MetricReceived, 2, "tenant", "acme", "signal_type", "k"),
		smp(MetricReceived, 1, "tenant", "bolt", "signal_type", "k"),
		smp(MetricSendDuration, 2, "tenant", "acme"),
		smp(MetricSendDuration, 1, "tenant", "bolt"),
		smp(MetricDelivered, 1, "tenant", "acme", "signal_type", "k", "outcome", "pushed"),
		smp(MetricDelivered, 1, "tenant", "acme", "signal_type", "k", "outcome", "queued_offline"),
		smp(MetricDelivered, 1, "tenant", "bolt", "signal_type", "k", "outcome", "dropped"),
		smp(MetricCacheHits, 1, "tenant", "acme"),
		smp(MetricCacheMisses, 1, "tenant", "acme"),
		smp(MetricCacheMisses, 1, "tenant", "bolt"),
		smp(MetricAcked, 1, "tenant", "acme", "signal_type", "k", "ack_kind", "terminal"),
		smp(MetricObligOpen, 0, "tenant", "acme", "kind", "task"),
		smp(MetricObligOpen, 1, "tenant", "bolt", "kind", "reply"),
		smp(MetricObligDurable, 1, "tenant", "acme", "kind", "task"),
		smp(MetricObligDegraded, 1, "tenant", "bolt", "kind", "reply"),
		smp(MetricSLAViolation, 1, "tenant", "bolt", "kind", "reply", "sla", "ack"),
		smp(MetricAuditDepth, 1, "tenant", "acme"),
		smp(MetricAuditDepth, 0, "tenant", "bolt"),
		smp(MetricAuditOverflow, 1, "tenant", "bolt", "reason", "rejected"),
		smp(MetricAuditOverflow, 0, "tenant", "bolt", "reason", "overwritten"), // a zero series nobody counted is fine
		smp(MetricTableSize, 1, "tenant", "acme"),
		smp(MetricHookCalls, 1, "hook", "on_register"),
		smp(MetricHookCalls, 2, "hook", "on_ws_connect"),
		smp(MetricHookCalls, 0, "hook", "on_heartbeat"),
		smp(MetricWriterAppended, 2, "tenant", "acme"), // a1's envelope and its handoff
		smp(MetricHookErrors, 1, "hook", "on_ws_connect", "reason", "unknown_session"),
	}}
	return h, s
}

func edit(s history.TelemetryScrape, f func([]history.TelemetrySample) []history.TelemetrySample) history.TelemetryScrape {
	c := append([]history.TelemetrySample(nil), s.Samples...)
	s.Samples = f(c)
	return s
}

func TestMarconiMetricsAgree(t *testing.T) {
	h, s := metricsFixture()
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: s, History: h}}); r.Status != check.Pass {
		t.Fatalf("good run: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	cases := map[string]history.TelemetryScrape{
		"double count": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			x[4].Value = 2 // pushed counted twice
			return x
		}),
		"dropped label": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			x[0].Labels = map[string]string{"tenant": "", "signal_type": "k"}
			x[1].Labels = map[string]string{"tenant": "", "signal_type": "k"}
			x[0].Value = 3
			x[1].Value = 0
			return x
		}),
		"gauge never decrements": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			x[11].Value = 1
			return x
		}),
		"missing series": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			return append(x[:15], x[16:]...) // the SLA violation never counted
		}),
		"appended counted twice (append.lua's appended + 2)": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			x[24].Value = 4
			return x
		}),
		"stray label set": edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
			return append(x, history.TelemetrySample{Name: MetricAcked, Labels: map[string]string{"tenant": "", "signal_type": "", "ack_kind": "terminal"}, Value: 1})
		}),
	}
	for name, bad := range cases {
		if r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: bad, History: h}}); r.Status != check.Fail {
			t.Errorf("%s: want fail, got %s %s", name, r.Status, r.Message)
		}
	}
}

func TestMarconiMetricsLedgerInconsistent(t *testing.T) {
	h, s := metricsFixture()
	h.Frames = map[string]int{} // the 200 said pushed; no receiver got it
	r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: s, History: h}})
	if r.Status != check.Fail {
		t.Fatalf("pushed without a frame: want fail, got %s %s", r.Status, r.Message)
	}
	h, _ = metricsFixture()
	h.StreamComplete = true
	h.Stream = map[string][]string{} // acme's kept entries never reached the stream
	if _, inc, _ := MetricsLedger(h); len(inc) != 2 {
		t.Fatalf("kept entries missing from a complete stream: want 2 inconsistencies, got %v", inc)
	}
}

func TestMarconiMetricsUnknown(t *testing.T) {
	h, s := metricsFixture()
	near := h
	near.ScrapeStart, near.ScrapeEnd = time.Second+50*time.Millisecond, time.Second+60*time.Millisecond // inside bolt's SLA window
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: s, History: near}}); r.Status != check.Unknown {
		t.Errorf("SLA deadline at the scrape: want unknown, got %s %s", r.Status, r.Message)
	}
	idle := h
	idle.HookErrors = nil
	bad := edit(s, func(x []history.TelemetrySample) []history.TelemetrySample { return x[:len(x)-1] })
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: bad, History: idle}}); r.Status != check.Unknown {
		t.Errorf("a family never moved: want unknown, got %s %s", r.Status, r.Message)
	}
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "final", Scrape: history.TelemetryScrape{Status: 500, Err: "gather"}, History: h}}); r.Status != check.Unknown {
		t.Errorf("failed scrape: want unknown, got %s", r.Status)
	}
}

func TestMarconiMetricsExposed(t *testing.T) {
	h, s := metricsFixture()
	good := MetricsPoint{Name: "final", Scrape: s, History: h}
	if r := marconiMetricsExposed([]MetricsPoint{good}); r.Status != check.Pass {
		t.Fatalf("good: %s %s", r.Status, r.Message)
	}
	if r := marconiMetricsExposed([]MetricsPoint{{Name: "mid", Scrape: history.TelemetryScrape{Status: 500, Err: "duplicate"}}, good}); r.Status != check.Fail {
		t.Errorf("500 mid-run: want fail, got %s", r.Status)
	}
	missing := edit(s, func(x []history.TelemetrySample) []history.TelemetrySample { return x[:11] }) // no obligation families
	if r := marconiMetricsExposed([]MetricsPoint{{Name: "final", Scrape: missing}}); r.Status != check.Fail {
		t.Errorf("obligation families missing: want fail, got %s", r.Status)
	}
}

// TestMarconiMetricsDurableIsTheStream: §4.1's durable boundary is the
// stream. With the writer paused (nothing in the stream yet) the queue
// holds both envelopes and a1's state handoff, and no obligation is
// durable; an instrument that counts durable at the queue's Offer fails.
func TestMarconiMetricsDurableIsTheStream(t *testing.T) {
	h, s := metricsFixture()
	final := MetricsPoint{Name: "final", Scrape: s, History: h}
	h.Stream = map[string][]string{}
	paused := edit(s, func(x []history.TelemetrySample) []history.TelemetrySample {
		x[13].Value = 0 // durable{acme,task}
		x[16].Value = 3 // depth{acme}: a1, a2 and a1's handoff
		x[24].Value = 0 // appended{acme}: nothing yet
		return x
	})
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "mid-run", Scrape: paused, History: h}, final}); r.Status != check.Pass {
		t.Fatalf("writer paused: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	atOffer := edit(paused, func(x []history.TelemetrySample) []history.TelemetrySample {
		x[13].Value = 1
		return x
	})
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "mid-run", Scrape: atOffer, History: h}, final}); r.Status != check.Fail {
		t.Errorf("durable counted before the stream has it: want fail, got %s %s", r.Status, r.Message)
	}
	noHandoff := edit(paused, func(x []history.TelemetrySample) []history.TelemetrySample {
		x[16].Value = 2
		return x
	})
	if r := marconiMetricsAgree([]MetricsPoint{{Name: "mid-run", Scrape: noHandoff, History: h}, final}); r.Status != check.Fail {
		t.Errorf("depth without the ack's state handoff: want fail, got %s %s", r.Status, r.Message)
	}
}
