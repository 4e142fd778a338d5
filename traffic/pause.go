package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
)

// The classic fencing fault: a paused pod (spec 000 §Safety theorems). A
// GC pause or SIGSTOP freezes every goroutine of a pod past its lease TTL;
// the pod then resumes with everything it believed — the leases it held, at
// the generations it held them — and acts on it: the calls it had composed
// before the freeze are delivered late, its frames are still stamped with
// the old generations, and its renewer keeps renewing them.

// ResumeOptions shapes what a resumed pod does with its stale beliefs.
type ResumeOptions struct {
	// Reacquire is the share of believed sessions the pod re-acquires under
	// its own name on resume (a client reconnecting to it) BEFORE its held
	// calls for them are delivered: the delayed renew/release of the old
	// generation then meets the same owner's newer lease.
	Reacquire float64
	// Release is the share of the other believed sessions whose held calls
	// include a release of the old generation (after the renew); a
	// re-acquired session always gets one — the delayed release that meets
	// the same owner's newer lease.
	Release float64
	// Ticks is how many renew ticks (TTL/3) the resumed pod keeps presenting
	// frames and renewing at its old generations, ignoring the refusals.
	Ticks int
	Seed  uint64
}

// belief is one lease a pod believes it holds.
type belief struct {
	lane    Lane
	session fencing.Session
	gen     int64
}

// Freeze pauses slot i's pod: every worker blocks before its next call,
// holding the call it composed (its scripts, session and generation) until
// Thaw. It returns the pod's name.
func (f *Fleet) Freeze(i int) (string, error) {
	f.mu.Lock()
	p := f.pods[f.slots[i]]
	f.mu.Unlock()
	if p == nil {
		return "", fmt.Errorf("freeze slot %d: no live pod", i)
	}
	p.freezeMu.Lock()
	defer p.freezeMu.Unlock()
	if p.freeze != nil {
		return "", fmt.Errorf("freeze %s: already frozen", p.Name)
	}
	p.freeze = make(chan struct{})
	p.frozenAt = f.clock.Now()
	p.frozenDir = p.dir.Load()
	return p.Name, nil
}

// awaitThaw blocks while the pod is frozen (or until it is stopped).
func (p *Pod) awaitThaw() {
	p.freezeMu.Lock()
	ch := p.freeze
	p.freezeMu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-p.ctx.Done():
	}
}

// Thaw resumes pod name, frozen since Freeze, and records the pause under
// label (the phase or window it spanned). Before its workers go on, the pod
// acts on every lease it believed it held when it froze, in seeded order:
// it re-acquires a share of those sessions afresh (same owner), then
// delivers its held calls for each — renew, frame (validate_fenced_header),
// and release for the re-acquired ones and a share of the rest — at the old
// generation, composed with the scripts it ran when it froze. Then its
// workers resume (a worker's held acquire composed again if a rollout
// changed the pod's phase meanwhile: see call), and for
// opts.Ticks renew ticks it keeps presenting frames and renewing at the old
// generations. Every call is recorded in the fleet's history.
func (f *Fleet) Thaw(name, label string, opts ResumeOptions) error {
	f.mu.Lock()
	p := f.pods[name]
	f.mu.Unlock()
	if p == nil {
		return fmt.Errorf("thaw %s: not a live pod", name)
	}
	p.freezeMu.Lock()
	ch, from, held := p.freeze, p.frozenAt, p.frozenDir
	p.freezeMu.Unlock()
	if ch == nil {
		return fmt.Errorf("thaw %s: not frozen", name)
	}
	to := f.clock.Now()
	beliefs := f.beliefs(name)
	pause := history.PodPause{Pod: name, Label: label, Phase: string(held.Phase()), From: from, To: to, Beliefs: map[string]int64{}}
	for _, b := range beliefs {
		pause.Beliefs[b.session.String()] = b.gen
	}
	f.mu.Lock()
	f.pauses = append(f.pauses, pause)
	f.mu.Unlock()

	rng := rand.New(rand.NewPCG(opts.Seed, uint64(len(beliefs))))
	rng.Shuffle(len(beliefs), func(i, j int) { beliefs[i], beliefs[j] = beliefs[j], beliefs[i] })
	ctx := p.ctx
	for _, b := range beliefs {
		if ctx.Err() != nil {
			break
		}
		reacquired := rng.Float64() < opts.Reacquire
		if reacquired {
			f.deliver(p, p.dir.Load(), b.lane, history.OpAcquire, b.session, name, 0, func(d *fencing.Directory) (history.FencingOp, error) {
				res, err := d.Acquire(ctx, b.session, name)
				return history.FencingOp{OK: res.OK, Gen: res.Generation, HolderGen: res.Holder.Generation, HolderOwner: res.Holder.Owner}, err
			})
		}
		f.staleRenew(ctx, p, held, b)
		f.staleFrame(ctx, p, held, b)
		if reacquired || rng.Float64() < opts.Release {
			f.deliver(p, held, b.lane, history.OpRelease, b.session, name, b.gen, func(d *fencing.Directory) (history.FencingOp, error) {
				ok, err := d.Release(ctx, b.session, name, b.gen)
				return history.FencingOp{OK: ok}, err
			})
		}
	}
	p.freezeMu.Lock()
	close(ch)
	p.freeze, p.frozenDir = nil, nil
	p.freezeMu.Unlock()
	if opts.Ticks <= 0 || len(beliefs) == 0 {
		return nil
	}
	p.wg.Add(1)
	go func() { // the resumed pod keeps acting on its stale beliefs
		defer p.wg.Done()
		tick := time.NewTicker(f.opts.TTL / 3)
		defer tick.Stop()
		for range opts.Ticks {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, b := range beliefs {
				if ctx.Err() != nil {
					return
				}
				d := p.dir.Load()
				f.staleFrame(ctx, p, d, b)
				f.staleRenew(ctx, p, d, b)
			}
		}
	}()
	return nil
}

func (f *Fleet) staleFrame(ctx context.Context, p *Pod, d *fencing.Directory, b belief) {
	f.deliver(p, d, b.lane, history.OpValidate, b.session, p.Name, b.gen, func(d *fencing.Directory) (history.FencingOp, error) {
		v, err := d.ValidateFencedHeader(ctx, b.session, p.Name, b.gen)
		return history.FencingOp{Verdict: int(v)}, err
	})
}

func (f *Fleet) staleRenew(ctx context.Context, p *Pod, d *fencing.Directory, b belief) {
	f.deliver(p, d, b.lane, history.OpRenew, b.session, p.Name, b.gen, func(d *fencing.Directory) (history.FencingOp, error) {
		ok, err := d.Renew(ctx, b.session, p.Name, b.gen)
		return history.FencingOp{OK: ok}, err
	})
}

// beliefs replays pod name's own recorded calls as its lanes keep them: a
// successful acquire is believed held until a renew of it fails or the pod
// releases it (whatever the release answered).
func (f *Fleet) beliefs(name string) []belief {
	type key struct {
		lane    string
		session string
	}
	held := map[key]history.MigrationOp{}
	for _, op := range f.History() {
		if op.Pod != name {
			continue
		}
		k := key{op.Lane, op.Session}
		switch {
		case op.Kind == history.OpAcquire && op.OK:
			held[k] = op
		case op.Kind == history.OpRenew && !op.OK, op.Kind == history.OpRelease:
			if h, ok := held[k]; ok && h.Gen == op.Gen {
				delete(held, k)
			}
		}
	}
	sessions := map[string]fencing.Session{}
	for _, s := range append(append([]fencing.Session(nil), f.opts.Reliable...), f.opts.Huddle...) {
		sessions[s.String()] = s
	}
	out := make([]belief, 0, len(held))
	for k, op := range held {
		out = append(out, belief{lane: Lane(k.lane), session: sessions[k.session], gen: op.Gen})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lane != out[j].lane {
			return out[i].lane < out[j].lane
		}
		return out[i].session.String() < out[j].session.String()
	})
	return out
}

// Pauses returns every recorded pause.
func (f *Fleet) Pauses() []history.PodPause {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]history.PodPause(nil), f.pauses...)
}
