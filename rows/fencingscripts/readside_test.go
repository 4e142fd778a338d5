package fencingscripts_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("fencing-scripts read side", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "fencing-scripts/read-side/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "the C read scripts under contention on the cluster: lookup (new key), known_generation (new ctr) and validate_fenced_header (new pair) with stale, current and future frames, judged against the explicit-state model's C read rule and authority (000 §Per-phase operation table, C)",
			Run:  func(ctx SpecContext) report.Check { return readSide(ctx, b) },
		})
	}
})

// readVariants are the read mutants of the C scripts (the phase-free row
// runs only C).
func readVariants() []fencing.ReadMutant {
	var out []fencing.ReadMutant
	for _, m := range fencing.ReadMutants {
		if m.Applies(fencing.C) {
			out = append(out, m)
		}
	}
	return out
}

// readSide races the contention workload on the cluster and, beside it,
// samples the read side on the same sessions: each sample runs the real C
// scripts and, on the same snapshot, the C read mutants (the controls).
func readSide(ctx SpecContext, b client.Backend) report.Check {
	scale := cfg.Scale()
	name := "fencing-scripts/read-side/" + string(b)
	rng := cfg.Rand(name)
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	sessions := harness.Sessions(rng, "read-side", scale.Sessions)
	dir := fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C)})
	variants := map[fencing.ReadMutant]*fencing.Directory{}
	for _, m := range readVariants() {
		variants[m] = fencing.New(pool, fencing.Options{Scripts: fencing.WithReadMutant(cfg.ScriptSet().Phase(fencing.C), m)})
	}
	clock := traffic.ClockOf(ctx)
	rec := &traffic.Recorder{}
	minSamples := 10 * scale.Sessions

	// NOTE: contention releases every lease at the end of its round, so a
	// sample rarely meets a live one; these sessions are left held (at
	// generation 2, after a release: a stale frame exists) for the probe to
	// validate the live lease's own frame.
	held := harness.Sessions(rng, "read-held", max(4, scale.Sessions/4))
	for _, s := range held {
		first := traffic.Acquire(ctx, dir, clock, rec, 0, s)
		Expect(first.OK).To(BeTrue(), "acquire %s", s)
		traffic.Release(ctx, dir, clock, rec, 0, s, first.Owner, first.Gen)
		Expect(traffic.Acquire(ctx, dir, clock, rec, 1, s).OK).To(BeTrue(), "re-acquire %s", s)
	}
	sessions = append(sessions, held...)

	By(fmt.Sprintf("contention on %d sessions × %d rounds, read samples beside it (at least %d) on those and %d held ones", len(sessions)-len(held), scale.Rounds, minSamples, len(held)))
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var ops []history.ReadOp
	samples, unstable, failed := 0, 0, 0
	done := make(chan struct{})
	wg.Add(1)
	var workErr error
	go func() {
		defer wg.Done()
		defer close(done)
		w := traffic.Contention{Sessions: sessions[:len(sessions)-len(held)], Rounds: scale.Rounds, Contenders: scale.Contenders, Workers: 8}
		workErr = w.Run(workCtx, dir, clock, rec)
	}()
	sampler := traffic.ReadSampler{Pool: pool, Dir: dir, Variants: variants, Pod: "reader", Lane: "tunnel"}
	contended := false
	for !contended || samples < minSamples {
		select {
		case <-done:
			contended = true
		default:
		}
		got, err := sampler.Sample(ctx, clock, sessions[rng.IntN(len(sessions))], fmt.Sprintf("pod-%d", rng.IntN(scale.Contenders)))
		switch {
		case errors.Is(err, traffic.ErrUnstable):
			unstable++
		case err != nil:
			failed++
			Expect(failed).To(BeNumerically("<", 10), "read samples keep failing: %v", err)
		default:
			samples++
			ops = append(ops, got...)
		}
	}
	wg.Wait()
	Expect(workErr).NotTo(HaveOccurred(), "the contention workload")

	var real []history.ReadOp
	bad := map[string][]history.ReadOp{}
	for _, op := range ops {
		if op.Variant == "" {
			real = append(real, op)
		} else {
			bad[op.Variant] = append(bad[op.Variant], op)
		}
	}
	issued := rec.FencingHistory()
	result := check.ReadSideCheck.Judge(check.ReadSideInput{Ops: real, Issued: issued, Opts: check.ReadSideOptions{Phases: []fencing.Phase{fencing.C}, MinPerCell: scale.Sessions}})
	ev.Observed = append(ev.Observed, fmt.Sprintf("%d read samples on %s (%d dropped because the keys moved mid-sample, %d on an error), beside %d contention operations", samples, cluster.Spec, unstable, failed, len(issued)))
	ev.Metrics = map[string]float64{"read_samples": float64(samples), "read_calls": float64(len(real)), "read_unstable": float64(unstable), "read_failed": float64(failed)}
	var controls []report.Control
	for _, m := range readVariants() {
		res := check.ReadSideCheck.Judge(check.ReadSideInput{Ops: bad[string(m)], Issued: issued, Opts: check.ReadSideOptions{Name: string(m)}})
		ctl := harness.Variant(string(m), fmt.Sprintf("the real C %s script with %s (impl/fencing/lua/mutants/read), on the same snapshots", m.Op(), m), res)
		if res.Counterexample != "" {
			ctl.Observed += "; e.g.\n" + firstLine(res.Counterexample)
		}
		controls = append(controls, ctl)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev, controls...)
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
