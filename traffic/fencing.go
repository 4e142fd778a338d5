package traffic

import (
	"context"
	"fmt"
	"sync"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
)

// Contention is the fencing-scripts workload (spec 000 §Conformance, Fencing
// scripts: "hash-tagged pairs execute atomically"): per session, rounds in
// which Contenders pods race to acquire; then every loser tries the winner's
// generation (renew, release, validate: all must be refused), the winner
// renews and validates, releases, and finally repeats its release and renew
// as a stale holder (both must be no-ops).
type Contention struct {
	Sessions   []fencing.Session
	Rounds     int
	Contenders int
	// Workers bounds how many sessions run at once.
	Workers int
}

// Run drives dir with the workload and records into rec. It returns the
// first context error; operation errors are recorded, never returned.
func (w Contention) Run(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder) error {
	workers := max(w.Workers, 1)
	jobs := make(chan fencing.Session)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				for round := range w.Rounds {
					if ctx.Err() != nil {
						return
					}
					w.round(ctx, dir, clock, rec, s, round)
				}
			}
		}()
	}
	for _, s := range w.Sessions {
		select {
		case jobs <- s:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	return ctx.Err()
}

func pod(i int) string { return fmt.Sprintf("pod-%d", i) }

func (w Contention) round(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, s fencing.Session, round int) {
	acquired := make([]history.FencingOp, w.Contenders)
	parallel(w.Contenders, func(i int) {
		acquired[i] = Acquire(ctx, dir, clock, rec, i, s)
	})
	winner := -1
	for i, op := range acquired {
		if op.OK && !op.Unknown {
			winner = i // with a correct script at most one; a mutant may yield more
		}
	}
	if winner < 0 {
		return
	}
	gen := acquired[winner].Gen
	parallel(w.Contenders, func(i int) {
		if i == winner {
			Renew(ctx, dir, clock, rec, i, s, pod(i), gen)
			Validate(ctx, dir, clock, rec, i, s, pod(i), gen)
			if gen > 1 {
				Validate(ctx, dir, clock, rec, i, s, pod(i), gen-1)
			}
			return
		}
		Renew(ctx, dir, clock, rec, i, s, pod(i), gen)
		Release(ctx, dir, clock, rec, i, s, pod(i), gen)
		Validate(ctx, dir, clock, rec, i, s, pod(i), gen)
	})
	Release(ctx, dir, clock, rec, winner, s, pod(winner), gen)
	Release(ctx, dir, clock, rec, winner, s, pod(winner), gen)
	Renew(ctx, dir, clock, rec, winner, s, pod(winner), gen)
}

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// Acquire runs and records one acquire by pod i.
func Acquire(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, i int, s fencing.Session) history.FencingOp {
	op := history.FencingOp{Client: i, Session: s.String(), Kind: history.OpAcquire, Owner: pod(i), Call: clock.Now()}
	res, err := dir.Acquire(ctx, s, op.Owner)
	op.Return = clock.Now()
	op.Unknown = err != nil
	op.OK, op.HolderGen, op.HolderOwner = res.OK, res.Holder.Generation, res.Holder.Owner
	if res.OK {
		op.Gen = res.Generation
	}
	rec.Fencing(op)
	rec.Outcome("acquire "+s.String(), err)
	recordFencing(ctx, pod(i), string(op.Kind), op.Call, op.Return, err)
	return op
}

// Renew runs and records one renew.
func Renew(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, i int, s fencing.Session, owner string, gen int64) history.FencingOp {
	return guarded(ctx, history.OpRenew, dir.Renew, clock, rec, i, s, owner, gen)
}

// Release runs and records one release.
func Release(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, i int, s fencing.Session, owner string, gen int64) history.FencingOp {
	return guarded(ctx, history.OpRelease, dir.Release, clock, rec, i, s, owner, gen)
}

// guarded runs and records one owner+generation guarded operation.
func guarded(ctx context.Context, kind history.FencingOpKind, do func(context.Context, fencing.Session, string, int64) (bool, error),
	clock *Clock, rec *Recorder, i int, s fencing.Session, owner string, gen int64) history.FencingOp {
	op := history.FencingOp{Client: i, Session: s.String(), Kind: kind, Owner: owner, Gen: gen, Call: clock.Now()}
	ok, err := do(ctx, s, owner, gen)
	op.Return, op.OK, op.Unknown = clock.Now(), ok, err != nil
	rec.Fencing(op)
	rec.Outcome(string(kind)+" "+s.String(), err)
	recordFencing(ctx, pod(i), string(op.Kind), op.Call, op.Return, err)
	return op
}

// Validate runs and records one validate_fenced_header.
func Validate(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, i int, s fencing.Session, owner string, gen int64) history.FencingOp {
	op := history.FencingOp{Client: i, Session: s.String(), Kind: history.OpValidate, Owner: owner, Gen: gen, Call: clock.Now()}
	v, err := dir.ValidateFencedHeader(ctx, s, owner, gen)
	op.Return, op.Verdict, op.Unknown = clock.Now(), int(v), err != nil
	rec.Fencing(op)
	rec.Outcome("validate "+s.String(), err)
	recordFencing(ctx, pod(i), string(op.Kind), op.Call, op.Return, err)
	return op
}

// Known runs and records one known_generation read (through lookup).
func Known(ctx context.Context, dir *fencing.Directory, clock *Clock, rec *Recorder, i int, s fencing.Session) history.FencingOp {
	op := history.FencingOp{Client: i, Session: s.String(), Kind: history.OpKnown, Call: clock.Now()}
	known, err := dir.KnownGeneration(ctx, s)
	op.Return, op.Gen, op.Unknown = clock.Now(), known, err != nil
	rec.Fencing(op)
	rec.Outcome("known "+s.String(), err)
	recordFencing(ctx, pod(i), string(op.Kind), op.Call, op.Return, err)
	return op
}
