// Package history is slotgate's one model of what happened in a scenario:
// the run clock, every operation a workload issued with its outcome, and
// every fault window, all on the same clock. traffic records into it, check
// reads it, fault.Apply records its windows into it, report draws it, and a
// run persists it so `slotgate check --from` can judge it again offline.
//
// Beside the generic Op, it holds the typed records each workload produces
// (FencingOp, MigrationOp, SubscriptionHistory, …, one file per family): traffic
// records them, check judges them, and a Judgement stores them as a
// checker's JSON input. They are plain data with at most a String or a
// one-line predicate; the judging stays in check, so traffic never imports
// check.
//
// It imports nothing of the harness (check, traffic, fault, report,
// suites, the model), only the protocol's plain vocabulary a record names
// (impl/fencing/protocol: ReadOp's frame, view and verdict), so every
// harness package may use it without bending the one-way import rule.
package history

import "time"

// Outcome is what the caller learned about an operation. An operation whose
// outcome is Unknown (a timeout, a dropped connection after the write was
// sent) stays unknown: checkers must never count it as ok.
type Outcome string

const (
	OK      Outcome = "ok"
	Failed  Outcome = "failed"
	Unknown Outcome = "unknown"
)

// OpOutcome is one operation's loud result as a checker of the errors
// column reads it: what the operation was (a label) and the error kind it
// returned ("" for success), as classified at the client seam. It is a
// separate record from Op because the workloads that produce it label
// their calls rather than time them.
type OpOutcome struct {
	Op string
	// ErrKind is the server error code (CROSSSLOT, NOSCRIPT, …), "network"
	// for an error without a server reply, or "" for success.
	ErrKind string
	Err     string
}

// Op is one operation as a client saw it. Start and End are offsets on the
// scenario's Clock, so histories from concurrent goroutines share one axis.
type Op struct {
	Start   time.Duration `json:"start"`
	End     time.Duration `json:"end"`
	Client  string        `json:"client,omitempty"`  // worker / pod name
	Backend string        `json:"backend,omitempty"` // go-redis | valkey-go | …
	Node    string        `json:"node,omitempty"`
	Slot    int           `json:"slot,omitempty"`
	Kind    string        `json:"kind"` // the operation: acquire, set, get, send, …
	Outcome Outcome       `json:"outcome"`
	ErrKind string        `json:"errKind,omitempty"` // MOVED, CROSSSLOT, network, …
	Err     string        `json:"err,omitempty"`
}

// FaultWindow is the one fault-window type: when a fault was in effect, on
// the scenario clock. Every injection records one through fault.Apply.
type FaultWindow struct {
	Fault  string        `json:"fault"`
	Target string        `json:"target"`
	Start  time.Duration `json:"start"`
	End    time.Duration `json:"end"`
	// Unhealthy says why the topology was not serving once the fault was
	// over (fault.Apply's health check), or why the injection failed.
	Unhealthy string `json:"unhealthy,omitempty"`
}

// Span is a named interval a scenario measured (a dispatch halt, an outage
// as the clients saw it), drawn on the timeline beside the fault windows.
type Span struct {
	Name   string        `json:"name"`
	Client string        `json:"client,omitempty"`
	Start  time.Duration `json:"start"`
	End    time.Duration `json:"end"`
}

// History is one scenario's record.
type History struct {
	Scenario string        `json:"scenario"`
	Seed     int64         `json:"seed"`
	Began    time.Time     `json:"began"` // wall time of the clock's zero
	Ops      []Op          `json:"ops"`
	Faults   []FaultWindow `json:"faults"`
	Spans    []Span        `json:"spans,omitempty"`
	Samples  []Sample      `json:"samples,omitempty"`
	// Judgements say which pure checker judged each scored check and on
	// what input, for `slotgate check --from`.
	Judgements []Judgement `json:"judgements,omitempty"`
	// Dropped counts the ok operations Cap left out to keep the file under
	// its size cap (never a fault window, never a non-ok operation).
	Dropped int `json:"dropped,omitempty"`
	// Crashed says the scenario ended before it was judged (a panic, a
	// failed setup or assertion, a timeout) and how: the history holds
	// what was recorded up to then, and no judgement.
	Crashed string `json:"crashed,omitempty"`
}
