package routing_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/routing/judge"
	"github.com/slotgate/slotgate/rows/routing/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("routing redirect after a stall", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "routing/redirect-after-stall/" + string(b), Row: row, Column: report.ColumnErrors,
			Spec: "a redirect met after the call was slow (a stalled runner, hidden read-timeout retries) is still re-sent once the slot settles: none reaches the caller (000 §Conformance, Routing: MOVED/ASK redirects under slot migration)",
			Run:  func(ctx SpecContext) report.Check { return redirectAfterStall(ctx, b) },
		})
	}
})

// stallBudget is the call path's redirect budget in this scenario, and
// stallFor how long the first redirected attempt is held: longer.
const (
	stallBudget = 100 * time.Millisecond
	stallFor    = 2 * stallBudget
)

// stallPool passes every command to the real pool; the first reply that is
// a redirect first runs settle (which finishes the slot's migration, so a
// re-send succeeds at once) and is then held for stallFor before the call
// path sees it. That is a stalled runner's shape made deterministic: the
// attempt that met the redirect outlasted the budget.
type stallPool struct {
	client.Pool
	settle func()
	once   sync.Once
}

func (p *stallPool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	v, err := p.Pool.Do(ctx, cmd)
	if routing.Redirected(err) {
		p.once.Do(func() {
			p.settle()
			time.Sleep(stallFor) // a duration: the stall outlasting the budget is the scenario
		})
	}
	return v, err
}

// splitPair puts a tagged pair in slot s mid-migration with one key moved,
// so a script on both keys is answered TRYAGAIN (by go-redis after its own
// retries, by valkey-go at once), and returns what finishes the migration.
func splitPair(ctx context.Context, seed client.Pool, k traffic.RoutingKeys) func() {
	GinkgoHelper()
	for _, key := range []string{k.A, k.B} {
		_, err := seed.Do(ctx, client.NewCmd("SET", []string{key}, "before"))
		Expect(err).NotTo(HaveOccurred())
	}
	src, err := cluster.SlotOwner(ctx, k.Slot)
	Expect(err).NotTo(HaveOccurred())
	var dst *fixtures.Node
	for _, p := range cluster.Primaries() {
		if p != src {
			dst = p
			break
		}
	}
	srcID, err := src.ID(ctx)
	Expect(err).NotTo(HaveOccurred())
	dstID, err := dst.ID(ctx)
	Expect(err).NotTo(HaveOccurred())
	sl := fmt.Sprint(k.Slot)
	host, port, _ := strings.Cut(dst.DirectAddr(), ":")
	admin := func(n *fixtures.Node, args ...any) {
		GinkgoHelper()
		_, err := n.Do(ctx, args...)
		Expect(err).NotTo(HaveOccurred())
	}
	admin(dst, "CLUSTER", "SETSLOT", sl, "IMPORTING", srcID)
	admin(src, "CLUSTER", "SETSLOT", sl, "MIGRATING", dstID)
	admin(src, "MIGRATE", host, port, "", "0", "5000", "KEYS", k.A)
	return func() {
		admin(src, "MIGRATE", host, port, "", "0", "5000", "KEYS", k.B)
		admin(dst, "CLUSTER", "SETSLOT", sl, "NODE", dstID)
		admin(src, "CLUSTER", "SETSLOT", sl, "NODE", dstID)
		for _, p := range cluster.Primaries() {
			if p != src && p != dst {
				admin(p, "CLUSTER", "SETSLOT", sl, "NODE", dstID)
			}
		}
	}
}

// stallRun writes n split pairs, each through a fresh call path of variant
// m over a stallPool, and records each call.
func stallRun(ctx context.Context, b client.Backend, name string, m routing.Mutant, n int) []judge.Op {
	GinkgoHelper()
	rng := cfg.Rand(name)
	tag := fmt.Sprintf("%x", rng.Uint32())
	seed := harness.Pool(ctx, b, cluster)
	w := &workload.Routing{Clock: traffic.ClockOf(ctx), Tag: "s" + tag}
	for i := range n {
		k := traffic.RoutingKeysIn(fmt.Sprintf("s%s-%d", tag, i), rng.IntN(slot.Count))
		settle := splitPair(ctx, seed, k)
		w.Pool = routing.Wrap(&stallPool{Pool: harness.Pool(ctx, b, cluster), settle: settle}, routing.Options{Budget: stallBudget, Mutant: m})
		w.Keys = append(w.Keys, k)
		w.PairSet(ctx, i, k)
	}
	return w.Ops()
}

func redirectAfterStall(ctx SpecContext, b client.Backend) report.Check {
	name := "routing/redirect-after-stall/" + string(b)
	n := 3
	if cfg.Profile == harness.ProfileFull {
		n = 8
	}
	By(fmt.Sprintf("%d pair scripts, each meeting TRYAGAIN on a half-migrated slot; the first redirected attempt finishes the migration and is held %v, past the %v budget", n, stallFor, stallBudget))
	ops := stallRun(ctx, b, name, routing.MutantNone, n)
	pool := harness.Pool(ctx, b, cluster)
	ev := harness.Evidence(cfg, cluster, pool)
	ev.Metrics = map[string]float64{"operations": float64(len(ops)), "budget_ms": float64(stallBudget.Milliseconds()), "stall_ms": float64(stallFor.Milliseconds())}
	result := check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: judge.Outcomes(ops), MinOps: n})

	By("negative control: the call path as it was, its budget a deadline fixed when the call starts")
	old := stallRun(ctx, b, name+"/"+string(routing.MutantBudgetFromCall), routing.MutantBudgetFromCall, n)
	ctl := harness.Variant(string(routing.MutantBudgetFromCall), "the budget counted from the call's start, no re-send guaranteed: the redirect met after the stall goes straight to the caller", check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: judge.Outcomes(old), MinOps: n}))
	ctl = harness.Premise(ctl, redirectsIn(kinds(old)) > 0, "no redirect reached the old call path: the stall it models never happened")
	ctl.Observed += fmt.Sprintf(" (error kinds %v)", kinds(old))
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}
