package marconi_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconi/judge"
	"github.com/slotgate/slotgate/rows/marconi/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

var _ = Describe("marconi-cache-lifecycle hook calls", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "marconi-cache-lifecycle/hook-calls/" + string(b), Row: report.RowMarconiCacheLifecycle, Column: report.ColumnSilentlyWrong,
			Spec: "two instances on one SessionStore, the shipped expiry sweeper (every 1 s): on_session_expired exactly once per instance that held a lapsed session, within one sweep of the lapse, never for a renewed one; on_register and on_master_change exactly once per acknowledged register / claim_master / handoff_master, with its arguments, including a claim over a master whose lease expired (002 §5 KeyspaceReaper, §8 Stage 2 hook list)",
			Run:  func(ctx SpecContext) report.Check { return judgeHookCalls(ctx, b) },
		})
	}
})

// hookCallsSlack is the allowance on top of one sweep period for the
// sweeper's confirming reads and for scheduling on a contended host.
const hookCallsSlack = time.Second

// hookCallVariants are the drill's negative controls: real meshes with a
// known-bad sweeper or claim_master, each judged by the checker that must
// catch it.
var hookCallVariants = []struct {
	mutant marconi.Mutant
	why    string
	sweep  bool // judged by the sweeper checker, else by the controller-hooks one
}{
	{marconi.MutantSweeperOffByOne, "the expiry sweeper's confirm loop stops one short: the last session due in a sweep never gets on_session_expired while it is the only one due", true},
	{marconi.MutantSweeperIndexRefires, "the expiry sweeper also fires on_session_expired for every expired member of the shared session index, every sweep: each lapsed session's hook fires again and again", true},
	{marconi.MutantTakeoverSkipsHook, "claim_master over a master whose lease expired flips the flag but skips on_master_change", false},
}

func judgeHookCalls(ctx SpecContext, b client.Backend) report.Check {
	runs := make([]judge.MeshHookRun, len(hookCallVariants)+1)
	By("the drill on a correct mesh pair and, beside it, on each bad variant's pair (own key prefix each)")
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			mutant, prefix := marconi.MutantNone, "hookcalls"
			if i > 0 {
				mutant = hookCallVariants[i-1].mutant
				prefix = "hookcalls-" + string(mutant)
			}
			runs[i] = runHookCalls(ctx, b, mutant, prefix)
		}()
	}
	wg.Wait()
	ref := runs[0]
	result := check.All("marconi-hook-calls", judge.SweeperExpiresOnce.Judge(ref), judge.ControlHooksOnce.Judge(ref))
	var ctls []report.Control
	for i, v := range hookCallVariants {
		r := judge.ControlHooksOnce.Judge(runs[i+1])
		if v.sweep {
			r = judge.SweeperExpiresOnce.Judge(runs[i+1])
		}
		ctls = append(ctls, harness.Variant(string(v.mutant), v.why, r))
	}
	ev := harness.Evidence(cfg, cluster, nil)
	expired := 0
	for _, c := range ref.Calls {
		if c.Hook == string(marconi.HookSessionExpired) {
			expired++
		}
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("reference: %d sessions, %d controller calls, %d hook calls (%d on_session_expired) on instances %v over %v",
		len(ref.Sessions), len(ref.Controls), len(ref.Calls), expired, ref.Instances, ref.Until.Round(time.Millisecond)))
	return harness.Check(report.RowMarconiCacheLifecycle, report.ColumnSilentlyWrong, "", result, ev, ctls...)
}

// hookCallsRecorder collects the hook calls of a drill's instances on the
// drill's clock (marconi.Options.OnHook, inside each hook).
type hookCallsRecorder struct {
	clock *traffic.Clock
	mu    sync.Mutex
	calls []judge.MeshHookCall
}

func (r *hookCallsRecorder) observer(instance string) func(marconi.HookCall) {
	return func(c marconi.HookCall) {
		at := r.clock.Now()
		r.mu.Lock()
		r.calls = append(r.calls, judge.MeshHookCall{Instance: instance, Hook: string(c.Hook), Tenant: c.Tenant, Project: c.Project, SessionID: c.SessionID, At: at})
		r.mu.Unlock()
	}
}

func (r *hookCallsRecorder) snapshot() []judge.MeshHookCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// runHookCalls is the drill: instance A registers sessions and claims a
// master; B starts (warms them up) and registers its own, claims and hands
// off a master of another project; two sessions are kept alive by
// heartbeats through B only (A's sweeper must find them live in the store
// and keep them); every other lease lapses. Once A's sweeper removed the
// lapsed master, A claims the flag for a kept session (a takeover). The
// drill watches until one sweep plus slack after the last lapse.
func runHookCalls(ctx context.Context, b client.Backend, mutant marconi.Mutant, prefix string) judge.MeshHookRun {
	GinkgoHelper()
	ttl := scaleOf().TTL
	clock := traffic.NewClock()
	hooks := &hookCallsRecorder{clock: clock}
	store := marconi.StoreOptions{TTL: ttl, Prefix: prefix}
	run := judge.MeshHookRun{Instances: []string{"A", "B"}, TTL: ttl, SweepEvery: marconi.DefaultSweepEvery, Slack: hookCallsSlack}
	start := func(name string) (*meshEnv, *workload.MeshRecorder) {
		e := startMesh(ctx, marconi.Options{Pool: newPool(ctx, b, prefix+"-"+name), Store: store, Sink: marconi.NewMemorySink(), Mutant: mutant, OnHook: hooks.observer(name)})
		Expect(e.mesh.Expiry()).To(Equal(marconi.ExpirySweeper), "the shipped on_session_expired source")
		return e, workload.NewMeshRecorder(clock, e.api)
	}
	lapses := map[string]*judge.MeshLapse{}
	var order []string
	control := func(instance, op string, s marconi.Session, call func() error) {
		c := judge.MeshControlCall{Instance: instance, Op: op, Tenant: s.Tenant, Project: s.Project, SessionID: s.SessionID, Start: clock.Now()}
		err := call()
		c.End = clock.Now()
		if err != nil {
			c.Err = err.Error()
		}
		run.Controls = append(run.Controls, c)
		Expect(err).NotTo(HaveOccurred(), "%s %s on %s", op, s.SessionID, instance)
		if op == "register" {
			lapses[s.SessionID] = &judge.MeshLapse{Tenant: s.Tenant, Project: s.Project, SessionID: s.SessionID, RenewStart: c.Start, RenewAck: c.End}
			order = append(order, s.SessionID)
		}
	}
	sess := func(project, id string) marconi.Session {
		return marconi.Session{SessionID: id, Tenant: tenant, Project: project, Identity: "id-" + id, Surface: "control"}
	}
	register := func(instance string, rec *workload.MeshRecorder, s marconi.Session) {
		control(instance, "register", s, func() error { _, err := rec.Register(ctx, s); return err })
	}

	a, recA := start("A")
	for i := range 4 {
		register("A", recA, sess("hc", fmt.Sprintf("a%d", i)))
	}
	oldMaster, newMaster, kept := sess("hc", "m-old"), sess("hc", "m-new"), sess("hc", "kept")
	for _, s := range []marconi.Session{oldMaster, newMaster, kept} {
		register("A", recA, s)
	}
	control("A", "claim_master", oldMaster, func() error { return recA.Master(ctx, tenant, "hc", "", oldMaster.SessionID) })

	bEnv, recB := start("B")
	for i := range 4 {
		register("B", recB, sess("hc", fmt.Sprintf("b%d", i)))
	}
	h1, h2 := sess("hc2", "h1"), sess("hc2", "h2")
	register("B", recB, h1)
	register("B", recB, h2)
	control("B", "claim_master", h1, func() error { return recB.Master(ctx, tenant, "hc2", "", h1.SessionID) })
	control("B", "handoff_master", h2, func() error { return recB.Master(ctx, tenant, "hc2", h1.SessionID, h2.SessionID) })
	heldA, heldB := a.mesh.Tables().Registrations, bEnv.mesh.Tables().Registrations
	for _, sid := range order {
		for name, held := range map[string]map[string]marconi.LiveSession{"A": heldA, "B": heldB} {
			if _, ok := held[sid]; ok {
				lapses[sid].HeldBy = append(lapses[sid].HeldBy, name)
			}
		}
		sort.Strings(lapses[sid].HeldBy)
	}

	By("the kept sessions are renewed through B alone, every TTL/4, until the drill ends")
	keep := []marconi.Session{newMaster, kept}
	for _, s := range keep {
		lapses[s.SessionID].Kept = true
	}
	stopKeep := make(chan struct{})
	keepDone := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(keepDone)
		tick := time.NewTicker(ttl / 4)
		defer tick.Stop()
		for {
			select {
			case <-stopKeep:
				return
			case <-tick.C:
			}
			for _, s := range keep {
				l := lapses[s.SessionID]
				begin := clock.Now()
				if _, err := recB.Heartbeat(ctx, s); err != nil {
					continue // a late renewal shows in MaxRenewGap
				}
				l.MaxRenewGap = max(l.MaxRenewGap, begin-l.RenewStart)
				l.RenewStart, l.RenewAck = begin, clock.Now()
			}
		}
	}()

	By("A's sweeper removes the lapsed master; then A claims the flag for a kept session (a takeover)")
	lapsedAt := lapses[oldMaster.SessionID].RenewAck + ttl
	// Not a failure when the bound passes: a master still held is what
	// the control records (no takeover).
	_ = wait.Within(ctx, lapsedAt+run.SweepEvery+run.Slack-clock.Now(), 20*time.Millisecond, func(context.Context) error {
		if _, ok := a.mesh.Tables().Registrations[oldMaster.SessionID]; ok || clock.Now() <= lapsedAt {
			return fmt.Errorf("A still holds the lapsed master %s", oldMaster.SessionID)
		}
		return nil
	})
	_, stillHeld := a.mesh.Tables().Registrations[oldMaster.SessionID]
	control("A", "claim_master", newMaster, func() error { return recA.Master(ctx, tenant, "hc", "", newMaster.SessionID) })
	run.Controls[len(run.Controls)-1].Takeover = !stillHeld && run.Controls[len(run.Controls)-1].Start > lapsedAt

	By("watch until one sweep plus slack after the last lapse")
	var last time.Duration
	for _, l := range lapses {
		if !l.Kept {
			last = max(last, l.RenewAck+ttl)
		}
	}
	if wait := last + run.SweepEvery + run.Slack + 100*time.Millisecond - clock.Now(); wait > 0 {
		time.Sleep(wait) // a duration: the watch window the hook calls are judged over
	}
	run.Until = clock.Now()
	close(stopKeep)
	<-keepDone
	run.Calls = hooks.snapshot()
	for _, sid := range order {
		run.Sessions = append(run.Sessions, *lapses[sid])
	}
	bEnv.stop()
	a.stop()
	return run
}
