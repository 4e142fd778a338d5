package fencingmigration_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/fencingmigration/judge"
	"github.com/slotgate/slotgate/suites/harness"
)

// A pod upgraded while it holds leases releases them with its new script
// version (spec 000 §Per-phase operation table, release: B "try new key;
// fall back old key"). The staged deploy's pods renew before they release,
// and B's renew moves an old-key lease first, so they almost never release
// a lease still on the old key; this scenario does it on purpose, for every
// upgrade step a held lease crosses.
var _ = Describe("fencing-migration release handover", func() {
	harness.Emit(harness.Scenario{
		Name: "fencing-migration/release-handover", Row: row, Column: report.ColumnErrors,
		Spec: "a lease taken under one script version and released under the next (O→A, A→B, B→B, B→C) is acknowledged to its owner, leaves both keyspaces, and is re-acquirable at once by another pod at a higher generation; B's release falls back to the old key (000 §Per-phase operation table, release; §The protocol, C-gate)",
		Run:  releaseHandover,
	})
})

// handoverSteps are the (acquire, release) phase pairs of a held lease
// across one upgrade; A→B is the one whose lease sits on the old key while
// a dual-keyspace release frees it.
var handoverSteps = [][2]fencing.Phase{{fencing.O, fencing.A}, {fencing.A, fencing.B}, {fencing.B, fencing.B}, {fencing.B, fencing.C}}

// handoverPerStep is how many sessions each step hands over.
const handoverPerStep = 8

func releaseHandover(ctx SpecContext) report.Check {
	Expect(standalone.Reset(ctx)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(standalone.Reset(ctx)).To(Succeed()) })
	pool := harness.Pool(ctx, cfg.Backends[0], standalone)
	rng := cfg.Rand("fencing-migration/release-handover")
	ev := harness.Evidence(cfg, standalone, pool)
	need := make([]string, len(handoverSteps))
	for i, st := range handoverSteps {
		need[i] = string(st[0]) + "→" + string(st[1])
	}
	phase := func(p fencing.Phase) fencing.Scripts { return cfg.ScriptSet().Phase(p) }

	By(fmt.Sprintf("%d sessions per step: acquire, upgrade the holder, release, re-acquire by another pod", handoverPerStep))
	hs, err := handovers(ctx, pool, phase, fmt.Sprintf("ho%x", rng.Uint32()))
	Expect(err).NotTo(HaveOccurred())
	result := judge.ReleaseHandovers.Judge(judge.ReleaseHandoversInput{Handovers: hs, Need: need, MinPer: handoverPerStep})
	ev.Observed = append(ev.Observed, result.Message)

	By("negative control: B's release that never falls back to the old key")
	bad, err := cfg.ScriptSet().WithLeaseMutant(fencing.MutantBReleaseNewKeyOnly)
	Expect(err).NotTo(HaveOccurred())
	badPhase := func(p fencing.Phase) fencing.Scripts {
		if p == fencing.B {
			return bad
		}
		return phase(p)
	}
	mhs, err := handovers(ctx, pool, badPhase, fmt.Sprintf("hm%x", rng.Uint32()))
	Expect(err).NotTo(HaveOccurred())
	ctlResult := judge.ReleaseHandovers.Judge(judge.ReleaseHandoversInput{Handovers: mhs, Need: need, MinPer: handoverPerStep})
	ev.Observed = append(ev.Observed, "b-release-new-key-only: "+ctlResult.Message)
	ctl := harness.Variant(string(fencing.MutantBReleaseNewKeyOnly), "real B release that looks at the new key only (lua/mutants/lease): a lease taken under A stays on the old key until its TTL — the release is refused, another pod's acquire is refused, the old keyspace drains a TTL late", ctlResult)
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}

// handovers runs every step of handoverSteps on handoverPerStep fresh
// sessions with scripts from phase, an hour-long TTL (expiry must never do
// the release's work) and two pods: the holder and the re-acquirer. A call
// that fails is recorded in its handover, not returned: it is the loud
// column's data. The error is a failed read-back of the keyspace.
func handovers(ctx context.Context, pool client.Pool, phase func(fencing.Phase) fencing.Scripts, prefix string) ([]judge.Handover, error) {
	dir := map[fencing.Phase]*fencing.Directory{}
	for _, p := range fencing.Phases {
		dir[p] = fencing.New(pool, fencing.Options{Scripts: phase(p), LeaseTTL: time.Hour})
	}
	exists := func(key string) (bool, error) {
		reply, err := pool.Do(ctx, client.NewCmd("EXISTS", []string{key}))
		if err != nil {
			return false, fmt.Errorf("read %s: %w", key, err)
		}
		n, err := client.AsInt64(reply)
		return n == 1, err
	}
	leases := func(s fencing.Session) (bool, bool, error) {
		old, err := exists(fencing.OldKeys(s).Lease)
		if err != nil {
			return false, false, err
		}
		nw, err := exists(fencing.NewKeys(s).Lease)
		return old, nw, err
	}
	const holder, next = "p1", "p2"
	var out []judge.Handover
	for _, st := range handoverSteps {
		for i := range handoverPerStep {
			s := fencing.Session{Community: "handover", ID: fmt.Sprintf("%s-%s%s-%d", prefix, st[0], st[1], i)}
			h := judge.Handover{Session: s.String(), From: string(st[0]), To: string(st[1])}
			got, err := dir[st[0]].Acquire(ctx, s, holder)
			if err != nil {
				h.Err = err.Error()
				out = append(out, h)
				continue
			}
			h.Acquired, h.Gen = got.OK, got.Generation
			if h.HeldOld, h.HeldNew, err = leases(s); err != nil {
				return out, err
			}
			if h.Released, err = dir[st[1]].Release(ctx, s, holder, got.Generation); err != nil {
				h.Err = err.Error()
				out = append(out, h)
				continue
			}
			if h.LeftOld, h.LeftNew, err = leases(s); err != nil {
				return out, err
			}
			again, err := dir[st[1]].Acquire(ctx, s, next)
			if err != nil {
				h.Err = err.Error()
			}
			h.Reacquired, h.NextGen, h.Holder = again.OK, again.Generation, again.Holder.Owner
			out = append(out, h)
		}
	}
	return out, nil
}
