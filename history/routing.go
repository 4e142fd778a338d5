package history

import "time"

// RoutingKind is what one routed operation did.
type RoutingKind string

const (
	RoutingSet     RoutingKind = "set"      // SET Keys[0] Value
	RoutingGet     RoutingKind = "get"      // GET Keys[0]
	RoutingIncr    RoutingKind = "incr"     // INCR Keys[0], reply in Int
	RoutingEvalSet RoutingKind = "eval-set" // EVAL writing Value to every key of a tagged pair
	RoutingEvalGet RoutingKind = "eval-get" // EVAL reading every key of a tagged pair
	// RoutingEvalIncr is a script that INCRs its one key, reply in Int.
	RoutingEvalIncr RoutingKind = "eval-incr"
)

// RoutingOp is one recorded operation of the routing workload. The workload
// gives every key one writer, but the checker does not rely on it: a key
// whose operations overlap in time is judged for linearizability.
type RoutingOp struct {
	Worker int
	Kind   RoutingKind
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
func (o RoutingOp) Acked() bool { return o.ErrKind == "" }
