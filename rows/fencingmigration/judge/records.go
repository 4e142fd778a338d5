// Package judge holds the fencing-migration row's records and pure checkers
// (spec 000 §Conformance, Fencing migration; §The protocol; §Deployment
// Gate): the keyspace drains the C-gate and a rollback into O rely on, the
// bounded drain, generations carried across a counter-moving step, release
// handovers, the pods' own validates, the rollout's stragglers and phase
// adjacency, the gate's mode doors, and the trace conformance of the real
// scripts against the explicit-state model. The T1/T2 checkers and the
// errors column the row shares with fencing-scripts and fencing-failover
// stay in check. Each checker here is defined under a stable name
// (check.Define), so a scenario's judgement replays offline (`slotgate check
// --from`); the aliases are the names earlier histories stored it under.
package judge

import "time"

// DrainAttempt is one gate step the operator asked while a keyspace could
// not drain (spec 000 §The protocol, C-gate): when it was asked, when the
// operator stopped asking, and how it ended. Cut says the scenario, not the
// operator, ended the wait (its own bound ran out first).
type DrainAttempt struct {
	Step         string
	Asked, Ended time.Duration
	Admitted     bool
	Stuck        bool   // ended with the operator's drain-stuck error
	Cut          bool   // still waiting when the scenario's bound ran out
	Err          string // why it ended unadmitted
}
