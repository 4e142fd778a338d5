package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

// flagLedger is a small exact walk: Stage 1 (fallback reads, legacy
// publish) then the table reads with the audit queue on and the archiver
// primary, then back; one pushed, one queued-and-pulled and one audited
// signal per phase, one probe per phase.
func flagLedger() StageFlagsLedger {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	l := StageFlagsLedger{
		Phases: []FlagPhase{
			{Name: "stage-1", Begin: ms(0), Applied: ms(1), HotPathIO: 4, Sends: 3},
			{Name: "shipped", Begin: ms(100), Applied: ms(101), RoutingReads: true, RegistrationReads: true, HotPathSend: true, AuditQueueWrite: true, Obligations: true, Archiver: "primary", Sends: 3},
			{Name: "back", Begin: ms(200), Applied: ms(201), HotPathIO: 4, Sends: 3},
		},
		Stream: map[string]int{}, Canonical: map[string]int{}, Shadow: map[string]int{}, MinSends: 3,
	}
	l.Mesh.Sessions = []MeshSession{{SessionID: "s1", Recipient: "t/p/a"}, {SessionID: "s2", Recipient: "t/p/b"}}
	for i, p := range l.Phases {
		base := p.Applied + ms(10)
		id := func(k string) string { return p.Name + "-" + k }
		kept := p.AuditQueueWrite
		l.Mesh.Sends = append(l.Mesh.Sends,
			MeshSend{SignalID: id("push"), Recipient: "t/p/a", Start: base, Done: base + ms(1), Status: 200, Outcome: "pushed", SessionID: "s1", AuditKept: kept},
			MeshSend{SignalID: id("queue"), Recipient: "t/p/b", Start: base + ms(2), Done: base + ms(3), Status: 200, Outcome: "queued_offline", SessionID: "s2", AuditKept: kept},
			MeshSend{SignalID: id("probe"), Recipient: "t/p/a", Start: base + ms(4), Done: base + ms(5), Status: 200, Outcome: "pushed", SessionID: "s1", AuditKept: kept})
		l.Mesh.Deliveries = append(l.Mesh.Deliveries, MeshDelivery{SignalID: id("push"), SessionID: "s1", At: base + ms(6)}, MeshDelivery{SignalID: id("probe"), SessionID: "s1", At: base + ms(6)})
		l.Pulled = append(l.Pulled, MeshDelivery{SignalID: id("queue"), SessionID: "t/p/b"})
		probe := FlagProbe{Phase: i, SignalID: id("probe"), StoreSession: "s9", TableSession: "s1", Got: "s1", Status: 200, WantObligation: true, Obligation: p.Obligations}
		if !p.RoutingReads {
			probe.Got = "s9"
		}
		l.Probes = append(l.Probes, probe)
		if kept {
			for _, k := range []string{"push", "queue", "probe"} {
				l.Stream[id(k)], l.Canonical[id(k)] = 1, 1
			}
		}
	}
	l.Mesh.End = ms(300)
	l.Attempts = []FlagAttempt{{Where: "set-flags", Flags: "x"}, {Where: "start", Flags: "y", Rule: "stage5-needs-archiver-primary", Err: "rule stage5-needs-archiver-primary"}}
	return l
}

func TestMarconiStageFlagsLedger(t *testing.T) {
	if r := marconiStageFlagsLedger(flagLedger()); r.Status != check.Pass {
		t.Fatalf("exact ledger: %s: %s\n%s", r.Status, r.Message, r.Counterexample)
	}
	cases := map[string]func(*StageFlagsLedger){
		"pulled lost":       func(l *StageFlagsLedger) { l.Pulled = l.Pulled[1:] },
		"duplicate":         func(l *StageFlagsLedger) { l.Mesh.Deliveries = append(l.Mesh.Deliveries, l.Mesh.Deliveries[0]) },
		"stale fallback":    func(l *StageFlagsLedger) { l.Probes[0].Got = "s1" },
		"fallback no I/O":   func(l *StageFlagsLedger) { l.Phases[0].HotPathIO = 0 },
		"hot path I/O":      func(l *StageFlagsLedger) { l.Phases[1].HotPathIO = 2 },
		"audit when off":    func(l *StageFlagsLedger) { l.Mesh.Sends[0].AuditKept = true; l.Stream[l.Mesh.Sends[0].SignalID] = 1 },
		"stream twice":      func(l *StageFlagsLedger) { l.Stream["shipped-push"] = 2 },
		"wrong archive":     func(l *StageFlagsLedger) { l.Canonical["shipped-push"], l.Shadow["shipped-push"] = 0, 1 },
		"obligation absent": func(l *StageFlagsLedger) { l.Probes[1].Obligation = false },
		"dropped outcome":   func(l *StageFlagsLedger) { l.Mesh.Sends[1].Outcome = "dropped" },
	}
	for name, edit := range cases {
		l := flagLedger()
		edit(&l)
		if r := marconiStageFlagsLedger(l); r.Status != check.Fail {
			t.Errorf("%s: %s: %s", name, r.Status, r.Message)
		}
	}
	l := flagLedger()
	l.Probes = nil
	if r := marconiStageFlagsLedger(l); r.Status != check.Unknown {
		t.Errorf("no probes: %s", r.Status)
	}
}

func TestMarconiStageFlagsRefusals(t *testing.T) {
	if r := marconiStageFlagsRefusals(flagLedger()); r.Status != check.Pass {
		t.Fatalf("clean: %s: %s", r.Status, r.Message)
	}
	cases := map[string]func(*StageFlagsLedger){
		"accepted":        func(l *StageFlagsLedger) { l.Attempts[1].Err = "" },
		"unnamed":         func(l *StageFlagsLedger) { l.Attempts[1].Err = "bad marconi flags" },
		"allowed refused": func(l *StageFlagsLedger) { l.Attempts[0].Err = "nope" },
		"send failed":     func(l *StageFlagsLedger) { l.Mesh.Sends[0].Status = 500 },
		"control error":   func(l *StageFlagsLedger) { l.Mesh.ControlErrors = []string{"register x: boom"} },
		"probe not 200":   func(l *StageFlagsLedger) { l.Probes[0].Status = 503 },
	}
	for name, edit := range cases {
		l := flagLedger()
		edit(&l)
		r := marconiStageFlagsRefusals(l)
		if r.Status != check.Fail {
			t.Errorf("%s: %s: %s", name, r.Status, r.Message)
		}
		if name == "accepted" && !strings.Contains(r.Counterexample, "stage5-needs-archiver-primary") {
			t.Errorf("accepted: counterexample does not name the rule: %s", r.Counterexample)
		}
	}
}

// flagDefaults is a two-flag set plus a mode, all at their defaults.
func flagDefaults() FlagDefaults {
	side := func() []FlagDefault {
		return []FlagDefault{
			{Field: "RoutingTableReads", Env: "MARCONI_ROUTING_TABLE_READS", Switch: true},
			{Field: "Verbs", Env: "MARCONI_VERB_*", Switch: true},
			{Field: "Expiry", Env: "MARCONI_SESSION_EXPIRY", Value: ""},
		}
	}
	return FlagDefaults{Fields: 3, Reader: side(), Mesh: side()}
}

func TestMarconiFlagsDefaultOff(t *testing.T) {
	if r := marconiFlagsDefaultOff(flagDefaults()); r.Status != check.Pass {
		t.Fatalf("all off: %s %s", r.Status, r.Message)
	}
	on := flagDefaults()
	on.Mesh[0].On = true
	if r := marconiFlagsDefaultOff(on); r.Status != check.Fail || !strings.Contains(r.Message, "MARCONI_ROUTING_TABLE_READS") {
		t.Fatalf("routing reads on in the mesh: %s %s", r.Status, r.Message)
	}
	verb := flagDefaults()
	verb.Reader[1].On = true
	if r := marconiFlagsDefaultOff(verb); r.Status != check.Fail {
		t.Fatalf("a verb on in the reader: %s %s", r.Status, r.Message)
	}
	mode := flagDefaults()
	mode.Mesh[2].Value = "sweeper"
	if r := marconiFlagsDefaultOff(mode); r.Status != check.Pass {
		t.Fatalf("a mode is not judged: %s %s", r.Status, r.Message)
	}
}

// TestMarconiFlagsDefaultOffPremises: a reading given MARCONI_* variables,
// or one that misses a field of the flag set, is no evidence of defaults.
func TestMarconiFlagsDefaultOffPremises(t *testing.T) {
	set := flagDefaults()
	set.Environ = []string{"MARCONI_HOT_PATH_SEND=1"}
	set.Mesh[0].On = true
	if r := marconiFlagsDefaultOff(set); r.Status != check.Unknown {
		t.Fatalf("environment set: %s %s", r.Status, r.Message)
	}
	short := flagDefaults()
	short.Fields = 4 // a flag the readings did not cover
	if r := marconiFlagsDefaultOff(short); r.Status != check.Unknown {
		t.Fatalf("a field missed: %s %s", r.Status, r.Message)
	}
	none := flagDefaults()
	none.Mesh = none.Mesh[2:]
	none.Reader = none.Reader[2:]
	none.Fields = 1
	if r := marconiFlagsDefaultOff(none); r.Status != check.Unknown {
		t.Fatalf("no switch: %s %s", r.Status, r.Message)
	}
}
