package audit

import (
	"errors"
	"fmt"
	"time"
)

// ErrBadConfig wraps every invalid queue, writer or archiver setting.
var ErrBadConfig = errors.New("bad audit configuration")

// Policy is what a full audit queue does with the next entry (spec 002 §3.6,
// overwrite_policy). Whatever it does, every entry it loses is counted in
// marconi_audit_queue_overwrite_total: the operator-visible loss event of
// the SPEC-101 loss budget.
type Policy string

const (
	// PolicyOldest evicts the oldest queued entries until the new one fits
	// and keeps the new one (the spec's default).
	PolicyOldest Policy = "oldest"
	// PolicyRejectNew refuses the new entry and keeps the queue as it is.
	PolicyRejectNew Policy = "reject_new"
	// PolicyBoundedBackPressure waits up to QueueConfig.BackPressureWait for
	// the Redis Stream writer to free space, then refuses the new entry.
	// The wait is bounded (at most MaxBackPressureWait) because Offer runs
	// inside send_signal: "Marconi does not block on the Redis writer's
	// health" (§3.6), so back pressure may cost a send a few milliseconds
	// of its 5 ms p99 budget (§2.1), never an unbounded stall. It waits only
	// for a writer that is draining — its last append succeeded and it took
	// entries within the last four waits (it is behind, not down); with
	// Redis unreachable or an append hanging, the entry is refused at once.
	PolicyBoundedBackPressure Policy = "bounded_back_pressure"
)

// MaxBackPressureWait caps QueueConfig.BackPressureWait: a send may be
// slowed by back pressure, never parked behind an outage.
const MaxBackPressureWait = 50 * time.Millisecond

// QueueConfig sizes one tenant's audit queue (spec 002 §3.6, "Sizing —
// per-tenant config"). The sizing formula is max_entries ≥ burst rate ×
// max writer lag × safety factor (≥ 2), bounded by max_bytes.
type QueueConfig struct {
	// MaxEntries is the hard cap on the number of queued entries.
	MaxEntries int
	// MaxBytes is the hard cap on the queue's memory footprint, as
	// estimated by EntrySize.
	MaxBytes int64
	// MaxAge ejects entries older than this (by Entry.ArrivedAt)
	// regardless of size.
	MaxAge time.Duration
	// Policy is the overwrite policy.
	Policy Policy
	// BackPressureWait is PolicyBoundedBackPressure's wait; ignored by the
	// other policies.
	BackPressureWait time.Duration
}

// DefaultQueueConfig is the spec's personal-install default (§3.6):
// max_entries=50_000, max_bytes=512MB, max_age_seconds=600,
// overwrite_policy=oldest. The back-pressure wait (2 ms) is ours: the spec
// names the policy without a bound.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{
		MaxEntries:       50_000,
		MaxBytes:         512 << 20,
		MaxAge:           600 * time.Second,
		Policy:           PolicyOldest,
		BackPressureWait: 2 * time.Millisecond,
	}
}

// validate rejects a configuration the queue cannot honour.
func (c QueueConfig) validate() error {
	switch {
	case c.MaxEntries <= 0:
		return fmt.Errorf("max_entries %d must be positive: %w", c.MaxEntries, ErrBadConfig)
	case c.MaxBytes <= 0:
		return fmt.Errorf("max_bytes %d must be positive: %w", c.MaxBytes, ErrBadConfig)
	case c.MaxAge <= 0:
		return fmt.Errorf("max_age %v must be positive: %w", c.MaxAge, ErrBadConfig)
	}
	switch c.Policy {
	case PolicyOldest, PolicyRejectNew:
	case PolicyBoundedBackPressure:
		if c.BackPressureWait <= 0 || c.BackPressureWait > MaxBackPressureWait {
			return fmt.Errorf("back-pressure wait %v must be in (0, %v]: %w", c.BackPressureWait, MaxBackPressureWait, ErrBadConfig)
		}
	default:
		return fmt.Errorf("overwrite policy %q (want oldest, reject_new or bounded_back_pressure): %w", c.Policy, ErrBadConfig)
	}
	return nil
}

// Targets says which table sets the PG archiver writes (spec 002 §8 Stage
// 4): the *_shadow twins under MARCONI_PG_ARCHIVER_SHADOW, the canonical
// tables under MARCONI_PG_ARCHIVER_PRIMARY (both, if both are set, in one
// transaction). The flags themselves are read by package marconi (its
// Flags), which cannot be imported from here.
type Targets struct {
	Shadow  bool
	Primary bool
}

func (t Targets) tableSets() []tableSet {
	var out []tableSet
	if t.Primary {
		out = append(out, canonicalTables)
	}
	if t.Shadow {
		out = append(out, shadowTables)
	}
	return out
}
