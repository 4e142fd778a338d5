package traffic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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

// ReadProbeOptions configures a ReadProbe over a Fleet.
type ReadProbeOptions struct {
	// Lanes are each lane's sessions; each lane is probed by its own loop.
	Lanes map[Lane][]fencing.Session
	// Variants are the read mutants whose scripts answer beside the real
	// ones on every sample (the controls).
	Variants []fencing.ReadMutant
	// Every is the pause between two samples of one lane.
	Every time.Duration
	Seed  uint64
}

// ReadProbeStats counts samples: judged, dropped because the keys moved
// during the sample, dropped on an error (a pod killed mid-sample, a cut
// link).
type ReadProbeStats struct {
	Samples, Unstable, Failed int
}

// ReadProbe makes the fleet's pods read: every sample picks a live pod
// (whatever phase it runs — a rollout leaves the fleet mixed) and a session
// of the lane, and runs ReadSampler through that pod's own pool and its
// current script phase.
type ReadProbe struct {
	f     *Fleet
	clock *Clock
	opts  ReadProbeOptions
	mu    sync.Mutex
	ops   []history.ReadOp
	stats ReadProbeStats
	// judged counts the judged samples per lane so far (Judged).
	judged map[Lane]int
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// StartReadProbe starts one probe loop per lane until Stop.
func StartReadProbe(ctx context.Context, f *Fleet, clock *Clock, opts ReadProbeOptions) *ReadProbe {
	p := &ReadProbe{f: f, clock: clock, opts: opts}
	ctx, p.stop = context.WithCancel(ctx)
	li := uint64(0)
	for _, lane := range []Lane{LaneReliable, LaneHuddle} {
		sessions := opts.Lanes[lane]
		if len(sessions) == 0 {
			continue
		}
		li++
		rng := rand.New(rand.NewPCG(opts.Seed, li))
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.loop(ctx, lane, sessions, rng)
		}()
	}
	return p
}

// Judged is how many samples were judged so far, per lane: a plan holds a
// phase until its reads were taken, not for a fixed time alone (ReadSince).
func (p *ReadProbe) Judged() map[Lane]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.judged)
}

// ReadSince says whether every lane the probe reads (one with sessions)
// judged at least n samples since the counts from (Judged).
func (p *ReadProbe) ReadSince(from map[Lane]int, n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for lane, sessions := range p.opts.Lanes {
		if len(sessions) > 0 && p.judged[lane]-from[lane] < max(n, 1) {
			return false
		}
	}
	return true
}

// Stop stops the probe and returns every judged call and the counts.
func (p *ReadProbe) Stop() ([]history.ReadOp, ReadProbeStats) {
	p.stop()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ops, p.stats
}

// livePods lists the live pods and the fleet's phase mix ("AB").
func (f *Fleet) livePods() ([]*Pod, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var pods []*Pod
	var mix []string
	for _, name := range f.slots {
		p := f.pods[name]
		if p == nil || p.dead.Load() {
			continue
		}
		pods = append(pods, p)
		if ph := string(p.dir.Load().Phase()); !slices.Contains(mix, ph) {
			mix = append(mix, ph)
		}
	}
	slices.SortFunc(mix, func(a, b string) int { return fencing.Phase(a).Index() - fencing.Phase(b).Index() })
	return pods, strings.Join(mix, "")
}

func (p *ReadProbe) loop(ctx context.Context, lane Lane, sessions []fencing.Session, rng *rand.Rand) {
	scripts := map[fencing.Phase]map[fencing.ReadMutant]fencing.Scripts{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.opts.Every):
		}
		pods, mix := p.f.livePods()
		if len(pods) == 0 {
			continue
		}
		pod := pods[rng.IntN(len(pods))]
		other := pods[rng.IntN(len(pods))].Name
		dir := pod.dir.Load()
		phase := dir.Phase()
		// The variants run the pod's phase through the pod's own pool.
		if scripts[phase] == nil {
			scripts[phase] = map[fencing.ReadMutant]fencing.Scripts{}
			for _, m := range p.opts.Variants {
				if m.Applies(phase) {
					scripts[phase][m] = fencing.WithReadMutant(p.f.set().Phase(phase), m)
				}
			}
		}
		vs := map[fencing.ReadMutant]*fencing.Directory{}
		for m, sc := range scripts[phase] {
			vs[m] = fencing.New(pod.pool, fencing.Options{Scripts: sc, LeaseTTL: p.f.opts.TTL})
		}
		s := ReadSampler{Pool: pod.pool, Dir: dir, Variants: vs, BothKeyspaces: true, Pod: pod.Name, Lane: string(lane), Mix: mix}
		ops, err := s.Sample(ctx, p.clock, sessions[rng.IntN(len(sessions))], other)
		p.mu.Lock()
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, ErrUnstable):
			p.stats.Unstable++
		case err != nil:
			p.stats.Failed++
		default:
			p.stats.Samples++
			p.ops = append(p.ops, ops...)
			if p.judged == nil {
				p.judged = map[Lane]int{}
			}
			p.judged[lane]++
		}
		p.mu.Unlock()
	}
}
