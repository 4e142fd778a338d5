package marconi

import (
	"errors"
	"fmt"
	"strings"
)

// Flags are the fine-grain MARCONI_* feature flags of spec 002 §8. Every
// flag defaults to OFF in the spec; ShippedFlags is the Stage 5 "status:
// shipped" set this reference implementation serves.
type Flags struct {
	// RoutingTableReads: MARCONI_ROUTING_TABLE_READS (Stage 1) — read
	// routing from the process-local table.
	RoutingTableReads bool
	// RegistrationTableReads: MARCONI_REGISTRATION_TABLE_READS (Stage 1).
	RegistrationTableReads bool
	// AuditQueueWrite: MARCONI_AUDIT_QUEUE_WRITE (Stage 3) — send_signal
	// offers every accepted envelope to the audit Sink.
	AuditQueueWrite bool
	// RedisStreamWriter: MARCONI_REDIS_STREAM_WRITER (Stage 3). Read by
	// whoever wires the audit workers; the mesh only carries it.
	RedisStreamWriter bool
	// PGArchiverShadow: MARCONI_PG_ARCHIVER_SHADOW (Stage 4); carried.
	PGArchiverShadow bool
	// PGArchiverPrimary: MARCONI_PG_ARCHIVER_PRIMARY (Stage 4); carried.
	PGArchiverPrimary bool
	// HotPathSend: MARCONI_HOT_PATH_SEND (Stage 5) — direct push from the
	// routing table. OFF is the legacy §2.2 path: the send also PUBLISHes
	// the envelope on the session's Redis channel before its 200.
	HotPathSend bool
	// ObligationsMemoryPrimary: MARCONI_OBLIGATIONS_MEMORY_PRIMARY (Stage 5)
	// — obligations tracked in the in-memory index with SLA sweepers.
	ObligationsMemoryPrimary bool
	// Verbs holds the per-verb MARCONI_VERB_<VERB> flags, keyed by the
	// upper-case verb; carried for the API layer.
	Verbs map[string]bool
	// CrossInstanceForward: MARCONI_CROSS_INSTANCE_FORWARD — reserved for a
	// later revision (§2.3); Validate refuses it.
	CrossInstanceForward bool
}

// ShippedFlags is the Stage 5 shipped configuration (§8 Stage 5: hot path
// send and archiver primary on, no synchronous PG write in send_signal).
func ShippedFlags() Flags {
	return Flags{
		RoutingTableReads: true, RegistrationTableReads: true,
		AuditQueueWrite: true, RedisStreamWriter: true,
		PGArchiverPrimary: true, HotPathSend: true, ObligationsMemoryPrimary: true,
	}
}

// ErrBadFlags wraps a flag combination the mesh refuses to start with.
var ErrBadFlags = errors.New("bad marconi flags")

// Validate refuses combinations this implementation does not serve.
// Stage 2's gate: the table-read flags flip ON only with the hooks wired,
// which they always are here; the SessionStore-read fallback of Stage 1
// would put Redis on the send path, so the tables are always read and the
// read flags must be ON. Cross-instance forwarding is post-v0.4 (§2.3).
func (f Flags) Validate() error {
	if !f.RoutingTableReads || !f.RegistrationTableReads {
		return fmt.Errorf("%w: MARCONI_ROUTING_TABLE_READS and MARCONI_REGISTRATION_TABLE_READS must be on (the SessionStore-read fallback is not served: it would put Redis on the send path, §2.1)", ErrBadFlags)
	}
	if f.CrossInstanceForward {
		return fmt.Errorf("%w: MARCONI_CROSS_INSTANCE_FORWARD is reserved for a later revision (§2.3)", ErrBadFlags)
	}
	if f.PGArchiverPrimary && f.PGArchiverShadow {
		return fmt.Errorf("%w: MARCONI_PG_ARCHIVER_SHADOW and MARCONI_PG_ARCHIVER_PRIMARY are exclusive (§8 Stage 4)", ErrBadFlags)
	}
	return nil
}

// FlagsFromEnv reads the MARCONI_* flags through getenv (os.Getenv in
// production, a map in tests). "1", "true", "on" and "yes" are ON; anything
// else, or unset, is OFF, as §8 defaults every flag.
func FlagsFromEnv(getenv func(string) string, environ []string) Flags {
	on := func(name string) bool {
		switch strings.ToLower(strings.TrimSpace(getenv(name))) {
		case "1", "true", "on", "yes":
			return true
		}
		return false
	}
	f := Flags{
		RoutingTableReads:        on("MARCONI_ROUTING_TABLE_READS"),
		RegistrationTableReads:   on("MARCONI_REGISTRATION_TABLE_READS"),
		AuditQueueWrite:          on("MARCONI_AUDIT_QUEUE_WRITE"),
		RedisStreamWriter:        on("MARCONI_REDIS_STREAM_WRITER"),
		PGArchiverShadow:         on("MARCONI_PG_ARCHIVER_SHADOW"),
		PGArchiverPrimary:        on("MARCONI_PG_ARCHIVER_PRIMARY"),
		HotPathSend:              on("MARCONI_HOT_PATH_SEND"),
		ObligationsMemoryPrimary: on("MARCONI_OBLIGATIONS_MEMORY_PRIMARY"),
		CrossInstanceForward:     on("MARCONI_CROSS_INSTANCE_FORWARD"),
	}
	const verbPrefix = "MARCONI_VERB_"
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if verb, ok := strings.CutPrefix(name, verbPrefix); ok && verb != "" {
			if f.Verbs == nil {
				f.Verbs = map[string]bool{}
			}
			f.Verbs[strings.ToUpper(verb)] = on(name)
		}
	}
	return f
}
