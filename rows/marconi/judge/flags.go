package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// Marconi stage-flag checkers (spec 002 §8 Migration path, "fine-grain
// feature flags ... flags flip traffic. Rollback per flag"). The harness
// walks the rollout forward and back under traffic and records one ledger;
// these judge it.

// FlagPhase is one state of the rollout as the harness applied it.
type FlagPhase struct {
	Name string
	// Flags is the flag set, as marconi.Flags prints it.
	Flags string
	// Begin is when the transition into the phase began (before the
	// archiver drain and SetFlags); Applied is when SetFlags returned.
	Begin, Applied time.Duration
	// RoutingReads and RegistrationReads are the table-read flags;
	// HotPathSend, AuditQueueWrite and Obligations the Stage 3/5 flags;
	// Archiver is "", "shadow" or "primary".
	RoutingReads, RegistrationReads, HotPathSend, AuditQueueWrite, Obligations bool
	Archiver                                                                   string
	// HotPathIO is the number of commands the mesh's client seam
	// attributed to sends during the phase (spec 002 §2.1 counting).
	HotPathIO int64
	// Sends is the number of sends answered 200 inside the phase.
	Sends int
}

// FlagProbe is one send to a recipient the SessionStore and the mesh's
// table disagree about: another writer of the store registered a newer
// session for it (no hook of this instance ran), so the store names
// StoreSession and the table TableSession.
type FlagProbe struct {
	Phase                      int
	SignalID                   string
	StoreSession, TableSession string
	// Got is the session the 200 named; Status the HTTP status.
	Got    string
	Status int
	// WantObligation: the probe asked for an obligation; Obligation: the
	// mesh holds one open for it afterwards.
	WantObligation, Obligation bool
}

// FlagAttempt is one flag combination the harness tried to start a mesh
// with or flip a running one to.
type FlagAttempt struct {
	Where string // "start" or "set-flags"
	Flags string
	// Rule is the rule the combination breaks ("" for an allowed one).
	Rule string
	// Err is the refusal ("" when accepted).
	Err string
}

// StageFlagsLedger is everything one rollout walk recorded.
type StageFlagsLedger struct {
	Mesh   MeshHistory
	Phases []FlagPhase
	Probes []FlagProbe
	// Pulled are the signals drained by prism_signals_pending at the end,
	// with the recipient key they were drained for (SessionID holds it).
	Pulled []MeshDelivery
	// Stream counts each signal id's entries in the Marconi Cache stream;
	// Canonical and Shadow its rows in signal_queue and its shadow.
	Stream, Canonical, Shadow map[string]int
	// Attempts are the flips of the walk and the forbidden combinations.
	Attempts []FlagAttempt
	MinSends int
}

// phaseOf returns the phase a send lies wholly inside (after its
// transition applied, done before the next began), or -1 for a send
// across a transition.
func (l StageFlagsLedger) phaseOf(s MeshSend) int {
	for i, p := range l.Phases {
		end := l.Mesh.End
		if i+1 < len(l.Phases) {
			end = l.Phases[i+1].Begin
		}
		if s.Start >= p.Applied && s.Done <= end {
			return i
		}
	}
	return -1
}

// marconiStageFlagsLedger is the silently-wrong side of the rollout: with
// every stage turned on and back off under traffic, the ledger stays exact.
//   - Delivery: every signal accepted pushed or queued_offline is delivered
//     exactly once, on its WebSocket or by the final prism_signals_pending
//     drain; none dropped, none invented, none twice.
//   - Audit (Stage 3): a send wholly inside a phase with
//     MARCONI_AUDIT_QUEUE_WRITE on was kept by the audit queue, one wholly
//     inside a phase with it off was not; every kept signal is in the
//     Marconi Cache stream exactly once, nothing else is.
//   - Archive (Stage 4): a kept signal of a phase with the archiver on is in
//     that mode's table (shadow or canonical) and not the other; no signal
//     is in both, none is in PG without being kept.
//   - Fallback (§8 flags): with MARCONI_ROUTING_TABLE_READS off a probe
//     resolves to the session the SessionStore names, with it on to the
//     table's; with the table-read flags and MARCONI_HOT_PATH_SEND on a
//     phase does no I/O on the send path, with any of them off it does
//     (the fallback read, or the legacy publish).
//   - Obligations (Stage 5): a probe asking for an obligation opens one in
//     memory exactly when MARCONI_OBLIGATIONS_MEMORY_PRIMARY is on.
func marconiStageFlagsLedger(l StageFlagsLedger) check.Result {
	const name = "marconi-stage-flags-ledger"
	var bad []string
	sends := map[string]MeshSend{}
	ok := 0
	for _, s := range l.Mesh.Sends {
		if s.OK() {
			sends[s.SignalID] = s
			ok++
		}
	}
	if ok < l.MinSends || len(l.Phases) < 2 {
		return check.Unknownf(name, "%d sends answered 200 over %d phases, need %d over at least 2", ok, len(l.Phases), l.MinSends)
	}

	// Delivery.
	got := map[string]int{}
	for _, d := range append(append([]MeshDelivery(nil), l.Mesh.Deliveries...), l.Pulled...) {
		got[d.SignalID]++
		if _, known := sends[d.SignalID]; !known {
			bad = append(bad, fmt.Sprintf("delivery of %s, which no send was answered 200 for", d.SignalID))
		}
	}
	lost, dup := 0, 0
	for id, s := range sends {
		switch {
		case s.Outcome != "pushed" && s.Outcome != "queued_offline":
			lost++
			bad = append(bad, fmt.Sprintf("%s to %s accepted as %q: not delivered nor queued", id, s.Recipient, s.Outcome))
		case got[id] == 0:
			lost++
			bad = append(bad, fmt.Sprintf("%s to %s accepted %s (%s) was never delivered nor drained", id, s.Recipient, s.Outcome, l.phaseName(s)))
		case got[id] > 1:
			dup++
			bad = append(bad, fmt.Sprintf("%s to %s delivered %d times", id, s.Recipient, got[id]))
		}
	}
	bad = append(bad, texts(misdelivered(l.Mesh))...)

	// Audit and archive.
	kept, archivedJudged := 0, 0
	for id, s := range sends {
		i := l.phaseOf(s)
		if i >= 0 {
			p := l.Phases[i]
			if p.AuditQueueWrite != s.AuditKept {
				bad = append(bad, fmt.Sprintf("%s in phase %q (audit queue write %v) answered audit_kept=%v", id, p.Name, p.AuditQueueWrite, s.AuditKept))
			}
		}
		if s.AuditKept {
			kept++
			if n := l.Stream[id]; n != 1 {
				bad = append(bad, fmt.Sprintf("%s kept by the audit queue is %d times in the stream", id, n))
			}
		} else if n := l.Stream[id]; n != 0 {
			bad = append(bad, fmt.Sprintf("%s not kept by the audit queue is %d times in the stream", id, n))
		}
		if l.Canonical[id] > 0 && l.Shadow[id] > 0 {
			bad = append(bad, fmt.Sprintf("%s archived twice: in signal_queue and signal_queue_shadow", id))
		}
		if (l.Canonical[id] > 0 || l.Shadow[id] > 0) && !s.AuditKept {
			bad = append(bad, fmt.Sprintf("%s is in PG but the audit queue never kept it", id))
		}
		if i < 0 || !s.AuditKept || l.Phases[i].Archiver == "" || i == len(l.Phases)-1 {
			continue
		}
		archivedJudged++
		want, other := l.Canonical[id], l.Shadow[id]
		if l.Phases[i].Archiver == "shadow" {
			want, other = other, want
		}
		if want != 1 || other != 0 {
			bad = append(bad, fmt.Sprintf("%s of phase %q (archiver %s): %d rows in its table, %d in the other", id, l.Phases[i].Name, l.Phases[i].Archiver, want, other))
		}
	}
	for id, n := range l.Stream {
		if _, known := sends[id]; !known && n > 0 {
			bad = append(bad, fmt.Sprintf("stream entry for %s, which no send was answered 200 for", id))
		}
	}

	// Fallback, I/O and obligations.
	for _, pr := range l.Probes {
		if pr.Status != 200 || pr.Phase < 0 || pr.Phase >= len(l.Phases) {
			continue // loud: the errors column's
		}
		p := l.Phases[pr.Phase]
		want, source := pr.TableSession, "the routing table"
		if !p.RoutingReads {
			want, source = pr.StoreSession, "the SessionStore"
		}
		if pr.Got != want {
			bad = append(bad, fmt.Sprintf("probe %s in phase %q routed to %q; %s names %q (store %q, table %q)", pr.SignalID, p.Name, pr.Got, source, want, pr.StoreSession, pr.TableSession))
		}
		if pr.WantObligation && pr.Obligation != p.Obligations {
			bad = append(bad, fmt.Sprintf("probe %s in phase %q (obligations in memory %v): obligation open %v", pr.SignalID, p.Name, p.Obligations, pr.Obligation))
		}
	}
	for _, p := range l.Phases {
		wantIO := !p.RoutingReads || !p.RegistrationReads || !p.HotPathSend
		if p.Sends == 0 {
			continue
		}
		if wantIO && p.HotPathIO == 0 {
			bad = append(bad, fmt.Sprintf("phase %q (%s): %d sends did no I/O on the send path, but a table-read flag or the hot path is off (the SessionStore read or the legacy publish is missing)", p.Name, p.Flags, p.Sends))
		}
		if !wantIO && p.HotPathIO != 0 {
			bad = append(bad, fmt.Sprintf("phase %q (%s): %d commands on the send path with the table reads and the hot path on", p.Name, p.Flags, p.HotPathIO))
		}
	}
	if len(l.Probes) == 0 {
		return check.Unknownf(name, "no probe: the fallback was not exercised")
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d ledger breaks over %d phases (%d accepted sends: %d lost, %d duplicated; first: %s)", len(bad), len(l.Phases), ok, lost, dup, bad[0])
	}
	return check.Passf(name, "%d phases walked forward and back under traffic: %d accepted sends each delivered exactly once (%d by the final pending drain), %d kept by the audit queue each once in the stream, %d archived in their phase's mode, %d probes routed by the source their flags name, send-path I/O exactly where a flag is off",
		len(l.Phases), ok, len(l.Pulled), kept, archivedJudged, len(l.Probes))
}

func (l StageFlagsLedger) phaseName(s MeshSend) string {
	if i := l.phaseOf(s); i >= 0 {
		return "phase " + l.Phases[i].Name
	}
	return "across a flip"
}

// marconiStageFlagsRefusals is the loud side: every send and probe of the
// walk answered 200, every control call and every allowed flip succeeded,
// and every forbidden combination (at start and as a flip of a running
// mesh) was refused with its rule named.
func marconiStageFlagsRefusals(l StageFlagsLedger) check.Result {
	const name = "marconi-stage-flags-refusals"
	var bad []string
	bad = append(bad, MeshFailedSends(l.Mesh)...)
	for _, e := range l.Mesh.ControlErrors {
		bad = append(bad, "control: "+e)
	}
	for _, p := range l.Probes {
		if p.Status != 200 {
			bad = append(bad, fmt.Sprintf("probe %s answered %d", p.SignalID, p.Status))
		}
	}
	allowed, refused := 0, 0
	for _, a := range l.Attempts {
		switch {
		case a.Rule == "" && a.Err != "":
			bad = append(bad, fmt.Sprintf("allowed flags %s refused at %s: %s", a.Flags, a.Where, a.Err))
		case a.Rule == "":
			allowed++
		case a.Err == "":
			bad = append(bad, fmt.Sprintf("forbidden flags %s (rule %s) accepted at %s", a.Flags, a.Rule, a.Where))
		case !strings.Contains(a.Err, a.Rule):
			bad = append(bad, fmt.Sprintf("forbidden flags %s refused at %s without naming rule %s: %s", a.Flags, a.Where, a.Rule, a.Err))
		default:
			refused++
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(meshFirst(bad, 12), "\n"), "%d loud failures (%s)", len(bad), bad[0])
	}
	if refused == 0 || allowed == 0 || len(l.Mesh.Sends) < l.MinSends {
		return check.Unknownf(name, "%d allowed flips, %d forbidden combinations tried, %d sends (need one of each and %d sends)", allowed, refused, len(l.Mesh.Sends), l.MinSends)
	}
	return check.Passf(name, "%d allowed flips accepted, %d forbidden combinations refused by name, %d sends and %d probes answered 200, no control call failed", allowed, refused, len(l.Mesh.Sends), len(l.Probes))
}

// FlagDefault is one MARCONI_* setting as a flag set holds it.
type FlagDefault struct {
	// Field is the marconi.Flags field; Env its environment name ("" when
	// the flag printer does not know it).
	Field, Env string
	// Switch: an on/off flag (a bool, or the per-verb map: on when any
	// verb is). A setting that is not on/off (MARCONI_SESSION_EXPIRY, a
	// mode) is recorded with its Value and not judged.
	Switch bool
	On     bool
	Value  string
}

// FlagDefaults is the shipped default of every flag the mesh defines, read
// two ways on a deployment that sets no MARCONI_* variable: by the
// environment reader the binary uses, and from the mesh started with what
// it read (its effective flags).
type FlagDefaults struct {
	// Fields is how many fields marconi.Flags has: every one must be in
	// Reader and in Mesh, so a flag added later is judged without a list
	// to update.
	Fields int
	// Environ is every MARCONI_* variable the reader was given (a default
	// is read with none).
	Environ      []string
	Reader, Mesh []FlagDefault
}

// marconiFlagsDefaultOff is spec 002 §8's default ("fine-grain feature
// flags", every flag OFF until its stage flips it): with no MARCONI_*
// variable set, every on/off flag is OFF as the environment reader returns
// it and as the started mesh holds it. A flag ON by default skips a stage
// nobody chose to enter — silently, since nothing was set. Premises: no
// MARCONI_* variable was given, and both readings cover every field of the
// flag set.
func marconiFlagsDefaultOff(d FlagDefaults) check.Result {
	const name = "marconi-flags-default-off"
	if len(d.Environ) > 0 {
		return check.Unknownf(name, "the reader was given %v: what it read is a configuration, not the defaults", d.Environ)
	}
	for _, side := range []struct {
		name string
		fs   []FlagDefault
	}{{"reader", d.Reader}, {"mesh", d.Mesh}} {
		fields := map[string]bool{}
		for _, f := range side.fs {
			fields[f.Field] = true
		}
		if d.Fields == 0 || len(fields) != d.Fields {
			return check.Unknownf(name, "the %s side covers %d of the flag set's %d fields: not every flag was read", side.name, len(fields), d.Fields)
		}
	}
	var bad []string
	switches := map[string]int{}
	for _, side := range []struct {
		name string
		fs   []FlagDefault
	}{{"the environment reader", d.Reader}, {"the started mesh", d.Mesh}} {
		for _, f := range side.fs {
			if !f.Switch {
				continue
			}
			switches[side.name]++
			if f.On {
				bad = append(bad, fmt.Sprintf("%s (%s) is ON by default in %s", orField(f), f.Field, side.name))
			}
		}
	}
	if switches["the environment reader"] == 0 || switches["the started mesh"] == 0 {
		return check.Unknownf(name, "no on/off flag among the %d fields", d.Fields)
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "\n"), "%d flags ON with no MARCONI_* set (first: %s)", len(bad), bad[0])
	}
	var settings []string
	for _, f := range d.Mesh {
		if !f.Switch {
			settings = append(settings, fmt.Sprintf("%s=%q", orField(f), f.Value))
		}
	}
	return check.Passf(name, "with no MARCONI_* set, all %d on/off flags OFF in the environment reader and in the started mesh (%d fields; not on/off, not judged: %s)",
		switches["the started mesh"], d.Fields, strings.Join(settings, ", "))
}

func orField(f FlagDefault) string {
	if f.Env != "" {
		return f.Env
	}
	return f.Field
}
