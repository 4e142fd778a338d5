package history

import "time"

// DrillOp is one recorded write (SET key seq) of the failure-drill workload,
// or the read-back of a key after the drill (Final, value in Seq). Each key
// has one sequential writer whose sequence numbers increase.
type DrillOp struct {
	Key     string
	Shard   int
	Seq     int64
	Final   bool
	ErrKind string
	Err     string
	Call    time.Duration
	Return  time.Duration
}

// Acked says the operation returned success.
func (o DrillOp) Acked() bool { return o.ErrKind == "" }
