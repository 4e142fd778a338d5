package traffic

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/internal/wait"
)

// bareFleet is a fleet of one pod whose calls the test makes itself
// through deliver/call (no lanes, no server): what the fleet records about
// a call is the recorder's logic alone.
func bareFleet(t *testing.T, sessions ...fencing.Session) (*Fleet, *Pod, *history.Recorder) {
	t.Helper()
	rec := history.NewRecorder("fleet", 1, nil)
	ctx := history.With(t.Context(), rec)
	f := &Fleet{clock: rec.Clock(), ctx: ctx, pods: map[string]*Pod{}, slots: []string{"pod0.1"},
		opts: FleetOptions{Reliable: sessions, TTL: time.Second}}
	p := &Pod{Name: "pod0.1"}
	p.ctx, p.cancel = context.WithCancel(ctx)
	t.Cleanup(p.cancel)
	p.dir.Store(fencing.New(nil, fencing.Options{})) // phase C; never called
	f.pods[p.Name] = p
	return f, p, rec
}

// deliver records the call's answer, its loud outcome and, for an error,
// an unknown result — abandoned when the pod was dead or the call
// cancelled — on the fleet's clock and in the scenario history.
func TestFleetDeliverRecords(t *testing.T) {
	s := fencing.Session{Community: "c", ID: "s1"}
	f, p, rec := bareFleet(t, s)
	answer := func(op history.FencingOp, err error) func(*fencing.Directory) (history.FencingOp, error) {
		return func(*fencing.Directory) (history.FencingOp, error) {
			time.Sleep(time.Millisecond) // a duration: the call's span the clock must record
			return op, err
		}
	}
	ok := f.deliver(p, p.dir.Load(), LaneReliable, history.OpAcquire, s, p.Name, 0, answer(history.FencingOp{OK: true, Gen: 5}, nil))
	lost := f.deliver(p, p.dir.Load(), LaneHuddle, history.OpRenew, s, p.Name, 3, answer(history.FencingOp{OK: true}, io.ErrUnexpectedEOF))
	cancelled := f.deliver(p, p.dir.Load(), LaneReliable, history.OpRelease, s, p.Name, 3, answer(history.FencingOp{}, context.Canceled))
	p.dead.Store(true)
	refused := f.deliver(p, p.dir.Load(), LaneReliable, history.OpValidate, s, p.Name, 3, answer(history.FencingOp{}, client.ParseServerError("NOSCRIPT No matching script")))

	if !ok.OK || ok.Unknown || ok.Gen != 5 || ok.ErrKind != "" || ok.Abandoned {
		t.Errorf("acquire answered gen 5 recorded as %+v", ok)
	}
	if ok.Pod != p.Name || ok.Phase != string(fencing.C) || ok.Lane != string(LaneReliable) || ok.Session != s.String() || ok.Kind != history.OpAcquire || ok.Owner != p.Name {
		t.Errorf("acquire attributed as %+v", ok)
	}
	if ok.Call <= 0 || ok.Return-ok.Call < time.Millisecond {
		t.Errorf("acquire spans %v..%v, want the call's millisecond on the clock", ok.Call, ok.Return)
	}
	if lost.OK || !lost.Unknown || lost.Gen != 3 || lost.ErrKind != "network" || lost.Err == "" || lost.Abandoned || lost.Lane != string(LaneHuddle) {
		t.Errorf("renew whose reply was lost recorded as %+v (an error overrides the answer: unknown, not ok)", lost)
	}
	if !cancelled.Unknown || !cancelled.Abandoned {
		t.Errorf("cancelled release recorded as %+v, want unknown and abandoned", cancelled)
	}
	if !refused.Unknown || !refused.Abandoned || refused.ErrKind != "NOSCRIPT" {
		t.Errorf("dead pod's refused validate recorded as %+v", refused)
	}
	if h := f.History(); len(h) != 4 || h[0].Call > h[1].Call || h[1].Call > h[2].Call {
		t.Fatalf("fleet history %d ops, want 4 in call order", len(h))
	}
	ops := rec.Snapshot().Ops
	if len(ops) != 4 {
		t.Fatalf("scenario history has %d ops, want 4", len(ops))
	}
	for i, want := range []history.Outcome{history.OK, history.Unknown, history.Unknown, history.Failed} {
		if ops[i].Outcome != want || ops[i].Client != p.Name || ops[i].Slot != -1 {
			t.Errorf("scenario op %d = %+v, want outcome %s by %s", i, ops[i], want, p.Name)
		}
	}
}

// History is sorted by call time whatever order the calls returned in.
func TestFleetHistorySorted(t *testing.T) {
	f, _, _ := bareFleet(t)
	for _, call := range []time.Duration{30, 10, 20} {
		op := history.MigrationOp{Pod: "p"}
		op.Call, op.Return = call, call+1
		f.record(op)
	}
	h := f.History()
	if len(h) != 3 || h[0].Call != 10 || h[1].Call != 20 || h[2].Call != 30 {
		t.Fatalf("history not in call order: %+v", h)
	}
}

// beliefs: a successful acquire is believed held until a renew of THAT
// generation fails or the pod releases it; other pods' calls, failed
// acquires and stale-generation refusals change nothing.
func TestFleetBeliefs(t *testing.T) {
	s1, s2, s3, s4 := fencing.Session{Community: "c", ID: "1"}, fencing.Session{Community: "c", ID: "2"},
		fencing.Session{Community: "c", ID: "3"}, fencing.Session{Community: "c", ID: "4"}
	f, p, _ := bareFleet(t, s1, s2, s3)
	f.opts.Huddle = []fencing.Session{s4}
	at := time.Duration(0)
	add := func(pod string, lane Lane, kind any, s fencing.Session, gen int64, ok bool) {
		at++
		op := history.MigrationOp{Pod: pod, Lane: string(lane)}
		op.Kind, op.Session, op.Gen, op.OK, op.Call, op.Return = kind.(history.FencingOpKind), s.String(), gen, ok, at, at
		f.record(op)
	}
	me := p.Name
	add(me, LaneReliable, history.OpAcquire, s1, 4, true)
	add(me, LaneReliable, history.OpRenew, s1, 3, false) // a stale generation's refusal
	add(me, LaneReliable, history.OpAcquire, s2, 2, true)
	add(me, LaneReliable, history.OpRenew, s2, 2, false) // lost it
	add(me, LaneReliable, history.OpAcquire, s3, 7, true)
	add(me, LaneReliable, history.OpRelease, s3, 7, false) // released, whatever it answered
	add(me, LaneReliable, history.OpAcquire, s3, 0, false) // a failed acquire
	add(me, LaneHuddle, history.OpAcquire, s4, 1, true)
	add(me, LaneHuddle, history.OpRenew, s4, 1, true)
	add("pod1.2", LaneReliable, history.OpAcquire, s2, 3, true) // someone else's
	got := f.beliefs(me)
	if len(got) != 2 {
		t.Fatalf("beliefs = %+v, want s4@1 (huddle) and s1@4 (reliable)", got)
	}
	if got[0].lane != LaneHuddle || got[0].session != s4 || got[0].gen != 1 {
		t.Errorf("first belief %+v, want huddle %v gen 1", got[0], s4)
	}
	if got[1].lane != LaneReliable || got[1].session != s1 || got[1].gen != 4 {
		t.Errorf("second belief %+v, want reliable %v gen 4", got[1], s1)
	}
	if other := f.beliefs("pod1.2"); len(other) != 1 || other[0].session != s2 || other[0].gen != 3 {
		t.Errorf("pod1.2 beliefs = %+v", other)
	}
}

// Freeze holds the call a worker composed until Thaw; Thaw records the
// pause (from freeze to thaw, its label, the phase it froze at).
func TestFleetFreezeThaw(t *testing.T) {
	s := fencing.Session{Community: "c", ID: "1"}
	f, p, _ := bareFleet(t, s)
	name, err := f.Freeze(0)
	if err != nil || name != p.Name {
		t.Fatalf("Freeze(0) = %q, %v", name, err)
	}
	if _, err := f.Freeze(0); err == nil {
		t.Fatal("a frozen pod froze twice")
	}
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		f.call(p, LaneReliable, history.OpRenew, s, p.Name, 1, func(*fencing.Directory) (history.FencingOp, error) { return history.FencingOp{OK: true}, nil })
	}()
	select {
	case <-delivered:
		t.Fatal("a frozen pod delivered its call")
	case <-time.After(30 * time.Millisecond):
	}
	if err := f.Thaw("nobody", "x", ResumeOptions{}); err == nil {
		t.Fatal("thawed a pod that does not exist")
	}
	if err := f.Thaw(p.Name, "window-1", ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	<-delivered
	pauses := f.Pauses()
	if len(pauses) != 1 {
		t.Fatalf("%d pauses recorded, want 1", len(pauses))
	}
	pz := pauses[0]
	if pz.Pod != p.Name || pz.Label != "window-1" || pz.Phase != string(fencing.C) || pz.To-pz.From < 30*time.Millisecond || len(pz.Beliefs) != 0 {
		t.Errorf("pause recorded as %+v", pz)
	}
	h := f.History()
	if len(h) != 1 || h[0].Call < pz.To {
		t.Errorf("held call recorded as %+v, want one call delivered after the thaw at %v", h, pz.To)
	}
	if err := f.Thaw(p.Name, "again", ResumeOptions{}); err == nil {
		t.Fatal("thawed a pod that was not frozen")
	}
}

// A real one-pod fleet on the standalone node, paused past its lease TTL:
// on thaw the pause records what the pod believed it held, and the pod's
// held calls for each belief — renew, frame, release at the old
// generation — are recorded after the thaw, composed with its old phase,
// and refused (its leases lapsed while it was frozen).
func TestFleetPauseStaleCalls(t *testing.T) {
	topo := standalone(t)
	scenario := history.NewRecorder("pause", 1, nil)
	ctx := history.With(t.Context(), scenario)
	const ttl = 150 * time.Millisecond
	var sessions []fencing.Session
	for i := range 3 {
		sessions = append(sessions, fencing.Session{Community: "tt-pause", ID: string(rune('a' + i))})
	}
	f, err := NewFleet(ctx, FleetOptions{Addr: topo.Addrs()[0], Backend: client.BackendGoRedis, Pods: 1, Reliable: sessions,
		TTL: ttl, Acquires: 3, Seed: 11}, scenario.Clock(), fencing.C)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if err := wait.Within(ctx, 5*time.Second, 10*time.Millisecond, func(context.Context) error {
		if len(f.beliefs(f.slots[0])) == 0 {
			return errors.New("the pod never acquired a lease")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	name, err := f.Freeze(0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl) // a duration: a pause longer than the lease TTL is the scenario
	if err := f.Thaw(name, "gc-pause", ResumeOptions{Release: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	pauses := f.Pauses()
	if len(pauses) != 1 || len(pauses[0].Beliefs) == 0 || pauses[0].To-pauses[0].From < 2*ttl {
		t.Fatalf("pauses %+v", pauses)
	}
	pz := pauses[0]
	f.Stop()
	stale := map[string]map[string]bool{} // session → kinds delivered after the thaw at the believed gen
	for _, op := range f.History() {
		gen, believed := pz.Beliefs[op.Session]
		if op.Pod != name || !believed || op.Call < pz.To || op.Gen != gen || op.Kind == history.OpAcquire {
			continue
		}
		if stale[op.Session] == nil {
			stale[op.Session] = map[string]bool{}
		}
		stale[op.Session][string(op.Kind)] = true
		if op.Phase != pz.Phase {
			t.Errorf("stale %s composed at phase %s, froze at %s", op.Kind, op.Phase, pz.Phase)
		}
		if op.Kind != history.OpValidate && op.OK && op.Err == "" {
			t.Errorf("stale %s of %s gen %d honoured after its lease lapsed: %+v", op.Kind, op.Session, gen, op)
		}
	}
	for s := range pz.Beliefs {
		if k := stale[s]; !k[string(history.OpRenew)] || !k[string(history.OpValidate)] || !k[string(history.OpRelease)] {
			t.Errorf("%s: stale calls after the thaw %v, want renew, validate and release", s, k)
		}
	}
}

// LivePods is what a row's probe drives: the live pods in slot order with
// their own pool and current directory, dead and empty slots skipped, and
// the fleet's phase mix in protocol order.
func TestFleetLivePods(t *testing.T) {
	f, p, _ := bareFleet(t)
	a := &Pod{Name: "pod1.1"}
	a.dir.Store(fencing.New(nil, fencing.Options{Scripts: fencing.Embedded().Phase(fencing.A)}))
	dead := &Pod{Name: "pod2.1"}
	dead.dir.Store(fencing.New(nil, fencing.Options{Scripts: fencing.Embedded().Phase(fencing.O)}))
	dead.dead.Store(true)
	f.pods[a.Name], f.pods[dead.Name] = a, dead
	f.slots = []string{a.Name, "pod3.none", dead.Name, p.Name}
	pods, mix := f.LivePods()
	if len(pods) != 2 || pods[0].Name != a.Name || pods[1].Name != p.Name {
		t.Fatalf("live pods %+v, want %s then %s", pods, a.Name, p.Name)
	}
	if pods[0].Dir != a.dir.Load() || pods[1].Dir.Phase() != fencing.C {
		t.Errorf("directories %v, %v: want each pod's current one", pods[0].Dir.Phase(), pods[1].Dir.Phase())
	}
	if mix != "AC" {
		t.Errorf("mix %q, want AC (the dead O pod left out)", mix)
	}
}
