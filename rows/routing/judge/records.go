// Package judge holds the routing row's records and pure checkers (spec 000
// §Conformance, Routing: "MOVED/ASK redirects under slot migration"): every
// routed operation of the workload, recorded with what it wrote, read or
// answered, and judged for lost and stale acknowledged writes, writes
// applied twice and redirects that reached the caller. Each checker is
// defined under a stable name (check.Define), so a scenario's judgement
// replays offline (`slotgate check --from`); the aliases are the names
// earlier histories stored it under.
package judge

import "time"

// Kind is what one routed operation did.
type Kind string

const (
	Set     Kind = "set"      // SET Keys[0] Value
	Get     Kind = "get"      // GET Keys[0]
	Incr    Kind = "incr"     // INCR Keys[0], reply in Int
	EvalSet Kind = "eval-set" // EVAL writing Value to every key of a tagged pair
	EvalGet Kind = "eval-get" // EVAL reading every key of a tagged pair
	// EvalIncr is a script that INCRs its one key, reply in Int.
	EvalIncr Kind = "eval-incr"
)

// Op is one recorded operation of the routing workload. The workload gives
// every key one writer, but the checker does not rely on it: a key whose
// operations overlap in time is judged for linearizability.
type Op struct {
	Worker int
	Kind   Kind
	Keys   []string
	// Value is what a write wrote.
	Value string
	// Got is what a read read, one entry per key; "" is nil (the workload
	// never writes an empty value).
	Got []string
	// Int is INCR's reply, or a counter's value read by a GET.
	Int int64
	// Final marks the read-back after every migration, by a correct pool.
	Final   bool
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}

// Acked says the operation returned success.
func (o Op) Acked() bool { return o.ErrKind == "" }
