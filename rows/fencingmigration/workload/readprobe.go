// Package workload holds the fencing-migration row's own traffic beside the
// shared fleet, operator and observer of package traffic: the read probe
// that makes a staged deploy's pods read while they roll (spec 000
// §Per-phase operation table: lookup, known_generation,
// validate_fenced_header in every phase and rollback), and the timeline of
// the fleet's directory calls.
package workload

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/traffic"
)

// ReadProbeOptions configures a ReadProbe over a traffic.Fleet.
type ReadProbeOptions struct {
	// Lanes are each lane's sessions; each lane is probed by its own loop.
	Lanes map[traffic.Lane][]fencing.Session
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
// of the lane, and runs traffic.ReadSampler through that pod's own pool and
// its current script phase.
type ReadProbe struct {
	f     *traffic.Fleet
	clock *traffic.Clock
	opts  ReadProbeOptions
	mu    sync.Mutex
	ops   []history.ReadOp
	stats ReadProbeStats
	// judged counts the judged samples per lane so far (Judged).
	judged map[traffic.Lane]int
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// StartReadProbe starts one probe loop per lane until Stop.
func StartReadProbe(ctx context.Context, f *traffic.Fleet, clock *traffic.Clock, opts ReadProbeOptions) *ReadProbe {
	p := &ReadProbe{f: f, clock: clock, opts: opts}
	ctx, p.stop = context.WithCancel(ctx)
	li := uint64(0)
	for _, lane := range []traffic.Lane{traffic.LaneReliable, traffic.LaneHuddle} {
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
func (p *ReadProbe) Judged() map[traffic.Lane]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.judged)
}

// ReadSince says whether every lane the probe reads (one with sessions)
// judged at least n samples since the counts from (Judged).
func (p *ReadProbe) ReadSince(from map[traffic.Lane]int, n int) bool {
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

func (p *ReadProbe) loop(ctx context.Context, lane traffic.Lane, sessions []fencing.Session, rng *rand.Rand) {
	scripts := map[fencing.Phase]map[fencing.ReadMutant]fencing.Scripts{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.opts.Every):
		}
		pods, mix := p.f.LivePods()
		if len(pods) == 0 {
			continue
		}
		pod := pods[rng.IntN(len(pods))]
		other := pods[rng.IntN(len(pods))].Name
		phase := pod.Dir.Phase()
		// The variants run the pod's phase through the pod's own pool.
		if scripts[phase] == nil {
			scripts[phase] = map[fencing.ReadMutant]fencing.Scripts{}
			for _, m := range p.opts.Variants {
				if m.Applies(phase) {
					scripts[phase][m] = fencing.WithReadMutant(p.f.ScriptSet().Phase(phase), m)
				}
			}
		}
		vs := map[fencing.ReadMutant]*fencing.Directory{}
		for m, sc := range scripts[phase] {
			vs[m] = fencing.New(pod.Pool, fencing.Options{Scripts: sc, LeaseTTL: p.f.LeaseTTL()})
		}
		s := traffic.ReadSampler{Pool: pod.Pool, Dir: pod.Dir, Variants: vs, BothKeyspaces: true, Pod: pod.Name, Lane: string(lane), Mix: mix}
		ops, err := s.Sample(ctx, p.clock, sessions[rng.IntN(len(sessions))], other)
		p.mu.Lock()
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, traffic.ErrUnstable):
			p.stats.Unstable++
		case err != nil:
			p.stats.Failed++
		default:
			p.stats.Samples++
			p.ops = append(p.ops, ops...)
			if p.judged == nil {
				p.judged = map[traffic.Lane]int{}
			}
			p.judged[lane]++
		}
		p.mu.Unlock()
	}
}
