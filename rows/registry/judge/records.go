// Package judge holds the registry row's records and pure checkers (spec 000
// §Mesh Registry Discovery): a mesh run recorded as a RegistryHistory — the
// known population and every heartbeat, deregister, crash, discovery and
// prune — judged against the contract's bounds. Each checker is defined
// under a stable name (check.Define), so a scenario's judgement replays
// offline (`slotgate check --from`); the aliases are the names earlier
// histories stored it under.
package judge

import "time"

// RegistryOpKind is one kind of mesh-registry history event.
type RegistryOpKind string

const (
	// RegHeartbeat is one heartbeat (record SET + index ZADD); a runtime's
	// first acknowledged heartbeat is its join.
	RegHeartbeat RegistryOpKind = "heartbeat"
	// RegDeregister is a clean leave (index ZREM + record DEL).
	RegDeregister RegistryOpKind = "deregister"
	// RegCrash is a runtime stopping without deregistering; Call is when it
	// stopped, after its last heartbeat returned.
	RegCrash RegistryOpKind = "crash"
	// RegDiscover is one discovery and what it returned.
	RegDiscover RegistryOpKind = "discover"
	// RegPrune is a discovery's opportunistic prune of dead scores.
	RegPrune RegistryOpKind = "prune"
)

// RegistryEntry is one runtime a discovery returned.
type RegistryEntry struct {
	ID   string
	Addr string
}

// RegistryOp is one recorded registry event (monotonic offsets from the
// scenario start).
type RegistryOp struct {
	Kind    RegistryOpKind
	Runtime string
	Call    time.Duration
	Return  time.Duration
	// ErrKind and Err are "" when the operation was acknowledged.
	ErrKind string
	Err     string
	Found   []RegistryEntry
}

// RegistryHistory is a mesh run: the known population (every runtime that
// ever ran, with the address it published) and everything that happened.
type RegistryHistory struct {
	Population map[string]string
	Ops        []RegistryOp
}
