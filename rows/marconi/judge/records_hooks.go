package judge

import "time"

// MeshHookCall is one Stage 2 hook call a mesh instance made (spec 002 §8
// Stage 2 hook list), as the instance's hook observer saw it synchronously
// inside the hook, stamped on the run's clock.
type MeshHookCall struct {
	Instance string
	Hook     string
	// Tenant, Project and SessionID are the hook's arguments;
	// on_master_change names the flag's new holder in SessionID.
	Tenant, Project, SessionID string
	At                         time.Duration
}

// MeshControlCall is one controller call the harness made on an instance
// through its API: register, claim_master or handoff_master.
type MeshControlCall struct {
	Instance string
	// Op is "register", "claim_master" or "handoff_master".
	Op string
	// SessionID is the registered session, or the flag's new holder.
	Tenant, Project, SessionID string
	Start, End                 time.Duration
	// Err is the call's error; empty for a 200.
	Err string
	// Takeover marks a claim_master whose previous holder's lease had
	// expired and been swept before the claim began.
	Takeover bool
}

// MeshLapse is one session of a hook-calls run and what the runner did
// with its lease.
type MeshLapse struct {
	Tenant, Project, SessionID string
	// RenewStart and RenewAck bound the runner's last acknowledged
	// register or heartbeat of the session: its record lapses on the
	// server TTL after an instant between them, unless Kept.
	RenewStart, RenewAck time.Duration
	// Kept: the runner renewed the lease until the end of the run, each
	// renewal started MaxRenewGap or less after the previous one's start.
	Kept        bool
	MaxRenewGap time.Duration
	// HeldBy are the instances whose routing tables held the session
	// when its lease lapsed (or at the end, if Kept).
	HeldBy []string
}

// MeshHookRun is a hook-calls run on two or more mesh instances sharing
// one SessionStore: every hook call each instance made, every controller
// call the runner made, and every session's lease.
type MeshHookRun struct {
	Instances []string
	// TTL is the SessionStore's session TTL; SweepEvery the instances'
	// expiry sweep period; Slack the scheduling and I/O allowance on top
	// of one sweep period.
	TTL, SweepEvery, Slack time.Duration
	Calls                  []MeshHookCall
	Controls               []MeshControlCall
	Sessions               []MeshLapse
	// Until is when the runner stopped observing hook calls.
	Until time.Duration
}
