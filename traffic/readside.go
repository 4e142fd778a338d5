package traffic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

// ReadSampler makes one caller's read-side calls (spec 000 §Per-phase
// operation table: lookup, known_generation, validate_fenced_header) on a
// session and records them with the keys they read: it MGETs the session's
// keys right before and right after, and keeps the calls only when both
// reads agree (history.ReadOp says why that pins what the scripts read).
type ReadSampler struct {
	Pool client.Pool
	// Dir is the caller's directory: its phase's real scripts.
	Dir *fencing.Directory
	// Variants are the same phase's scripts under read mutants, run on the
	// same snapshot (the negative controls); only the operation each
	// mutant changes is called.
	Variants map[fencing.ReadMutant]*fencing.Directory
	// BothKeyspaces snapshots all four keys (a standalone node, disabled
	// mode); otherwise only the phase's own pair (one slot: legal on a
	// cluster), the other keyspace read as empty.
	BothKeyspaces bool
	Pod, Lane     string
	// Mix is the fleet's phase mix at the call (ReadOp.Mix).
	Mix string
}

// ErrUnstable means the session's keys changed during the sample, so its
// calls cannot be pinned to one keyspace and are dropped.
var ErrUnstable = errors.New("keyspace changed during the read sample")

// Sample makes the calls on s and returns them. other is an owner that is
// not the live holder's, for a current-generation frame of someone else.
func (r ReadSampler) Sample(ctx context.Context, clock *Clock, s fencing.Session, other string) ([]history.ReadOp, error) {
	before, err := r.snapshot(ctx, s)
	if err != nil {
		return nil, err
	}
	last := max(before.OldCtr, before.NewCtr)
	holder := before.New
	if !holder.Live() {
		holder = before.Old
	}
	who := holder.Owner
	if who == "" {
		who = r.Pod
	}
	if other == who {
		other += "-other"
	}
	var frames []model.Frame
	if holder.Live() {
		frames = append(frames, model.Frame{Owner: holder.Owner, Gen: holder.Gen})
	}
	if last >= 1 {
		frames = append(frames, model.Frame{Owner: other, Gen: last})
	}
	if last >= 2 {
		frames = append(frames, model.Frame{Owner: who, Gen: last - 1})
	}
	frames = append(frames, model.Frame{Owner: who, Gen: last + 1})

	phase := string(r.Dir.Phase())
	var out []history.ReadOp
	base := history.ReadOp{Pod: r.Pod, Phase: phase, Lane: r.Lane, Session: s.String(), Mix: r.Mix}
	run := func(d *fencing.Directory, variant string, kinds []history.ReadKind) error {
		for _, k := range kinds {
			op := base
			op.Variant, op.Kind = variant, k
			switch k {
			case history.ReadLookup, history.ReadKnownGeneration:
				op.Call = clock.Now()
				var snap fencing.Snapshot
				var err error
				if k == history.ReadLookup {
					snap, err = d.Lookup(ctx, s)
				} else {
					snap.KnownGeneration, err = d.KnownGeneration(ctx, s)
				}
				op.Return = clock.Now()
				if err != nil {
					return err
				}
				op.Got.Known = snap.KnownGeneration
				if snap.Held {
					op.Got.Holder = model.Stored{Owner: snap.Holder.Owner, Gen: snap.Holder.Generation}
				}
				out = append(out, op)
			case history.ReadValidate:
				for _, f := range frames {
					op := op
					op.Frame, op.Class = f, history.ClassOf(f.Gen, last)
					op.Call = clock.Now()
					v, err := d.ValidateFencedHeader(ctx, s, f.Owner, f.Gen)
					op.Return = clock.Now()
					if err != nil {
						return err
					}
					op.Verdict = v
					out = append(out, op)
				}
			}
		}
		return nil
	}
	if err := run(r.Dir, "", history.ReadKinds); err != nil {
		return nil, err
	}
	for _, m := range fencing.ReadMutants {
		d := r.Variants[m]
		if d == nil || !m.Applies(r.Dir.Phase()) {
			continue
		}
		if err := run(d, string(m), []history.ReadKind{history.ReadKind(m.Op())}); err != nil {
			return nil, err
		}
	}
	after, err := r.snapshot(ctx, s)
	if err != nil {
		return nil, err
	}
	if after != before {
		return nil, fmt.Errorf("%s: %w: %s then %s", s, ErrUnstable, before, after)
	}
	for i := range out {
		out[i].Keyspace = before
	}
	return out, nil
}

func (r ReadSampler) snapshot(ctx context.Context, s fencing.Session) (model.StoredKeyspace, error) {
	o, n := fencing.OldKeys(s), fencing.NewKeys(s)
	keys := []string{o.Lease, o.Generation, n.Lease, n.Generation}
	if !r.BothKeyspaces {
		own := r.Dir.Keys(s)
		keys = []string{own.Lease, own.Generation}
	}
	reply, err := r.Pool.Do(ctx, client.NewCmd("MGET", keys))
	if err != nil {
		return model.StoredKeyspace{}, fmt.Errorf("snapshot %s: %w", s, err)
	}
	vals, isNil, err := client.AsStrings(reply)
	if err != nil || len(vals) != len(keys) {
		return model.StoredKeyspace{}, fmt.Errorf("snapshot %s: %w: %v", s, fencing.ErrBadReply, reply)
	}
	lease := func(i int) (model.Stored, error) {
		if isNil[i] {
			return model.Stored{}, nil
		}
		gen, owner, ok := strings.Cut(vals[i], ":")
		g, err := strconv.ParseInt(gen, 10, 64)
		if !ok || err != nil {
			return model.Stored{}, fmt.Errorf("snapshot %s: %w: lease %q", s, fencing.ErrBadReply, vals[i])
		}
		return model.Stored{Owner: owner, Gen: g}, nil
	}
	ctr := func(i int) (int64, error) {
		if isNil[i] {
			return 0, nil
		}
		return strconv.ParseInt(vals[i], 10, 64)
	}
	var k model.StoredKeyspace
	var e [4]error
	if r.BothKeyspaces {
		k.Old, e[0] = lease(0)
		k.OldCtr, e[1] = ctr(1)
		k.New, e[2] = lease(2)
		k.NewCtr, e[3] = ctr(3)
	} else if r.Dir.Phase() == fencing.O {
		k.Old, e[0] = lease(0)
		k.OldCtr, e[1] = ctr(1)
	} else {
		k.New, e[0] = lease(0)
		k.NewCtr, e[1] = ctr(1)
	}
	if err := errors.Join(e[:]...); err != nil {
		return model.StoredKeyspace{}, fmt.Errorf("snapshot %s: %w", s, err)
	}
	return k, nil
}
