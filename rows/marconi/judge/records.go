package judge

import (
	"fmt"
	"time"
)

// MeshSend is one prism_signal call as its sender recorded it.
type MeshSend struct {
	SignalID string
	// Recipient is the routing key "tenant/project/identity".
	Recipient   string
	Start, Done time.Duration
	// Status is the HTTP status; 0 when no answer came (transport error).
	Status int
	Err    string
	// Outcome and SessionID are the 200's delivery decision.
	Outcome, SessionID string
	// AuditKept is the 200's audit_kept: the audit queue took the entry.
	AuditKept bool
}

// OK reports a 200.
func (s MeshSend) OK() bool { return s.Status == 200 }

// String renders a send for a counterexample: its status (0: no answer) and error.
func (s MeshSend) String() string {
	return fmt.Sprintf("send %s to %s at %v answered %d %s", s.SignalID, s.Recipient, s.Start.Round(time.Millisecond), s.Status, s.Err)
}

// MeshDelivery is one envelope a receiver shim got on its WebSocket.
type MeshDelivery struct {
	SignalID, SessionID string
	At                  time.Duration
}

// MeshSession is one session's life as the control plane acknowledged it.
type MeshSession struct {
	SessionID string
	Recipient string // "tenant/project/identity"
	// Registered is when register answered 200.
	Registered time.Duration
	// Ended is when the session stopped existing: the deregister's 200,
	// or the lapse of its TTL for a session left to expire (Expired).
	// Zero: it lives to the end.
	Ended time.Duration
	// DeregisterStart is when the deregister was sent, or when the shim of
	// an Expired session went away (no more heartbeats, socket closed).
	DeregisterStart time.Duration
	Expired         bool
}

// MeshMasterChange is one acknowledged master flag flip.
type MeshMasterChange struct {
	// Project is "tenant/project".
	Project    string
	SessionID  string
	Start, Ack time.Duration
}

// MeshHistory is what a Marconi traffic run recorded.
type MeshHistory struct {
	Sends         []MeshSend
	Deliveries    []MeshDelivery
	Sessions      []MeshSession
	MasterChanges []MeshMasterChange
	// ControlErrors are control-plane calls (register, heartbeat,
	// deregister, master flips, WS attach) that failed: loud.
	ControlErrors []string
	End           time.Duration
}

// MeshRouteState is what the tables said about one session, read before
// and after a hook ran.
type MeshRouteState struct {
	// Route is the session id the session's identity routes to.
	Route string
	// Master is the session id the master alias routes to.
	Master     string
	Registered bool
	Attached   bool
	// LastHeartbeat is the registration's freshness stamp.
	LastHeartbeat time.Time
	// Pending is the identity's pending-signal depth.
	Pending int
}

// MeshHookStep is one hook call observed on the real tables.
type MeshHookStep struct {
	Hook      string
	SessionID string
	// Via says what triggered it (the API call, a key expiry, …).
	Via           string
	Before, After MeshRouteState
}

// MeshIndexProbe is one session's membership of its tenant's SessionStore
// index (<prefix>:sessidx:{tenant}), read with ZSCORE on the server after a
// run, for every session whose deregister was acknowledged.
type MeshIndexProbe struct {
	SessionID, Tenant string
	// Index is the index key read.
	Index string
	// Member: ZSCORE answered a score (the session id is still indexed);
	// Score is it (unix ms, the expiry the member was last stamped with).
	Member bool
	Score  float64
}
