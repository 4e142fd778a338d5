// Package workload holds the fencing-failover row's own traffic: what the
// staged deploy across failovers needs beyond the shared fleet, gate
// operator and observer (traffic). It records history.MigrationOp on the
// scenario clock and asserts nothing.
package workload

import (
	"context"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/traffic"
)

// SeedSessions takes and releases each session once through dir (phase O
// before a deploy starts), recording both calls as the pod "seed": sessions
// that ended before the migration, whose generation counters only the
// backfill carries into the new keyspace (spec 000 §The Fencing Migration;
// no pod touches them in B).
func SeedSessions(ctx context.Context, dir *fencing.Directory, clock *traffic.Clock, sessions []fencing.Session) []history.MigrationOp {
	const owner = "seed"
	var out []history.MigrationOp
	for _, s := range sessions {
		op := func(kind history.FencingOpKind, gen int64) history.MigrationOp {
			return history.MigrationOp{FencingOp: history.FencingOp{Session: s.String(), Kind: kind, Owner: owner, Gen: gen}, Pod: owner, Phase: string(dir.Phase()), Lane: "cold"}
		}
		acq := timed(clock, op(history.OpAcquire, 0), func(op *history.MigrationOp) error {
			res, err := dir.Acquire(ctx, s, owner)
			op.OK, op.Gen = res.OK, res.Generation
			return err
		})
		out = append(out, acq)
		if !acq.OK {
			continue
		}
		out = append(out, timed(clock, op(history.OpRelease, acq.Gen), func(op *history.MigrationOp) (err error) {
			op.OK, err = dir.Release(ctx, s, owner, acq.Gen)
			return err
		}))
	}
	return out
}

// timed runs do as op's call on clock, stamping its call and return, and
// marks op unknown with the error's kind when do fails: a call that erred
// may still have applied, so its outcome is not known, whatever do set.
func timed(clock *traffic.Clock, op history.MigrationOp, do func(op *history.MigrationOp) error) history.MigrationOp {
	call := clock.Now()
	err := do(&op)
	op.Call, op.Return = call, clock.Now()
	if err != nil {
		op.Unknown, op.OK = true, false
		op.ErrKind, op.Err = traffic.ErrKind(err), err.Error()
	}
	return op
}
