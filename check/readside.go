package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/model"
)

// Stage is a named stretch of a run (a gate step: "advance to B",
// "rollback to A", …) from From until the next stage.
type Stage struct {
	Name string
	From time.Duration
}

// ReadSideOptions says what coverage makes the read-side verdict decidable.
type ReadSideOptions struct {
	// Name labels the result (e.g. the lane).
	Name string
	// Phases must each see every read kind at least MinPerCell times and
	// validate with a stale, a current and a future frame and the live
	// lease's own.
	Phases     []fencing.Phase
	MinPerCell int
	// Stages must each see at least one judged read; MinMixed reads must
	// have been made while pods of two phases ran.
	Stages   []Stage
	MinMixed int
}

// ReadSide judges read-side calls against the explicit-state model's read
// rules (spec 000 §Per-phase operation table; model.ReadRuleFor,
// model.Authority) three ways, each a pure function of the history:
//
//   - table: the answer is the caller's phase rule over the keys it read
//     (lookup: union, new wins; known_generation: max; validate: the union
//     pair against the max) — exact, per call;
//   - authority: the answer is the truth the model's InvReadSide demands —
//     the one live lease, the highest generation issued, the fence's
//     verdict from them — so a phase rule applied outside the states the
//     Deployment Gate keeps it in is caught too;
//   - real time: known_generation (and lookup's) is never below a
//     generation whose acquire was acknowledged before the read began
//     (issued: the run's acquires), independent of the snapshot.
//
// Coverage below opts is Unknown (blind), never a pass.
func ReadSide(ops []history.ReadOp, issued []history.FencingOp, opts ReadSideOptions) Result {
	name := "read-side"
	if opts.Name != "" {
		name += "/" + opts.Name
	}
	acked := map[string][]history.FencingOp{}
	for _, op := range issued {
		if op.Kind == history.OpAcquire && op.OK && !op.Unknown {
			acked[op.Session] = append(acked[op.Session], op)
		}
	}
	for _, a := range acked {
		sort.Slice(a, func(i, j int) bool { return a[i].Return < a[j].Return })
	}
	// highest generation acknowledged before t.
	before := func(session string, t time.Duration) int64 {
		var g int64
		for _, op := range acked[session] {
			if op.Return >= t {
				break
			}
			g = max(g, op.Gen)
		}
		return g
	}
	type cell struct {
		phase string
		kind  history.ReadKind
	}
	count := map[cell]int{}
	classes := map[string]map[history.GenClass]int{}
	liveFrames := map[string]int{} // validates of the live lease's own frame
	byStage := map[string]int{}
	byMix := map[string]int{}
	mixed, wrong := 0, 0
	var table, authority, realtime []string
	for _, op := range ops {
		bad := len(table) + len(authority) + len(realtime)
		count[cell{op.Phase, op.Kind}]++
		if op.Mixed() {
			mixed++
		}
		if op.Mix != "" {
			byMix[op.Mix]++
		}
		if len(opts.Stages) > 0 {
			byStage[stageOf(opts.Stages, op.Call)]++
		}
		rule := model.ReadRuleFor(fencing.Phase(op.Phase), fencing.ReadCorrect)
		k := op.Keyspace
		last := max(k.OldCtr, k.NewCtr)
		truth := model.Authority(k, last)
		switch op.Kind {
		case history.ReadLookup, history.ReadKnownGeneration:
			want := rule.Lookup(k)
			got := op.Got
			say := func(v model.View) string { return v.String() }
			if op.Kind == history.ReadKnownGeneration {
				want.Holder, truth.Holder, got.Holder = model.Stored{}, model.Stored{}, model.Stored{}
				say = func(v model.View) string { return fmt.Sprintf("known=%d", v.Known) }
			}
			switch {
			case got != want:
				table = append(table, fmt.Sprintf("%v\n  the phase %s table says %s", op, op.Phase, say(want)))
			case got != truth:
				authority = append(authority, fmt.Sprintf("%v\n  the authority is %s (the phase rule read a keyspace the gate should have drained)", op, say(truth)))
			}
			if g := before(op.Session, op.Call); op.Got.Known < g {
				realtime = append(realtime, fmt.Sprintf("%v\n  generation %d was acknowledged before the read began", op, g))
			}
		case history.ReadValidate:
			if classes[op.Phase] == nil {
				classes[op.Phase] = map[history.GenClass]int{}
			}
			classes[op.Phase][op.Class]++
			want := rule.Validate(k, op.Frame.Owner, op.Frame.Gen)
			tv := model.AuthorityVerdict(k, last, op.Frame.Owner, op.Frame.Gen)
			if tv == fencing.VerdictValid {
				liveFrames[op.Phase]++
			}
			switch {
			case op.Verdict != want:
				table = append(table, fmt.Sprintf("%v\n  the phase %s table says %s", op, op.Phase, want))
			case op.Verdict != tv:
				authority = append(authority, fmt.Sprintf("%v\n  the authority says %s", op, tv))
			}
		}
		if len(table)+len(authority)+len(realtime) > bad {
			wrong++
		}
	}
	var cov []string
	for _, p := range opts.Phases {
		ph := string(p)
		var kinds []string
		for _, k := range history.ReadKinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, count[cell{ph, k}]))
		}
		cl := classes[ph]
		cov = append(cov, fmt.Sprintf("phase %s: %s (frames: stale %d, current %d of which the live lease's own %d, future %d)", ph, strings.Join(kinds, ", "), cl[history.GenStale], cl[history.GenCurrent], liveFrames[ph], cl[history.GenFuture]))
	}
	var stages []string
	for _, s := range opts.Stages {
		stages = append(stages, fmt.Sprintf("%s %d", s.Name, byStage[s.Name]))
	}
	observed := []string{fmt.Sprintf("%s: %d reads judged, %d while pods of two phases ran; %s", name, len(ops), mixed, strings.Join(cov, "; "))}
	if len(stages) > 0 {
		observed = append(observed, fmt.Sprintf("%s: reads per gate stage: %s", name, strings.Join(stages, ", ")))
	}
	if len(byMix) > 0 {
		var mixes []string
		for m, n := range byMix {
			mixes = append(mixes, fmt.Sprintf("%s %d", m, n))
		}
		sort.Strings(mixes)
		observed = append(observed, fmt.Sprintf("%s: reads per fleet phase mix: %s", name, strings.Join(mixes, ", ")))
	}
	if wrong > 0 {
		r := fail(name, strings.Join(append(append(first(table, 2), first(authority, 2)...), first(realtime, 2)...), "\n"),
			"%s: %d of %d reads wrong: %d against the phase table, %d against the authority, %d below an acknowledged generation", name, wrong, len(ops), len(table), len(authority), len(realtime))
		r.Observed = observed
		return r
	}
	var gaps []string
	for _, p := range opts.Phases {
		for _, k := range history.ReadKinds {
			if count[cell{string(p), k}] < opts.MinPerCell {
				gaps = append(gaps, fmt.Sprintf("%s in phase %s: %d", k, p, count[cell{string(p), k}]))
			}
		}
		for _, c := range history.GenClasses {
			if classes[string(p)][c] == 0 {
				gaps = append(gaps, fmt.Sprintf("no %s frame validated in phase %s", c, p))
			}
		}
		if liveFrames[string(p)] == 0 {
			gaps = append(gaps, fmt.Sprintf("no live lease's own frame validated in phase %s", p))
		}
	}
	for _, s := range opts.Stages {
		if byStage[s.Name] == 0 {
			gaps = append(gaps, "no read during "+s.Name)
		}
	}
	if mixed < opts.MinMixed {
		gaps = append(gaps, fmt.Sprintf("%d reads under a mixed fleet, need %d", mixed, opts.MinMixed))
	}
	if len(gaps) > 0 {
		r := unknown(name, "%s: too little read coverage to judge (%s)", name, strings.Join(first(gaps, 6), "; "))
		r.Observed = observed
		return r
	}
	fleet := ""
	if mixed > 0 {
		fleet = fmt.Sprintf(" (%d under a mixed fleet)", mixed)
	}
	r := pass(name, "%s: %d reads%s agree with the phase table and the authority; known_generation never below an acknowledged generation", name, len(ops), fleet)
	r.Observed = observed
	return r
}

// stageOf is the name of the last stage begun at or before t ("before" when
// none has).
func stageOf(stages []Stage, t time.Duration) string {
	name := "before " + stages[0].Name
	for _, s := range stages {
		if s.From > t {
			break
		}
		name = s.Name
	}
	return name
}

// PodValidates judges the validate_fenced_header calls the relay pods make
// on their own frames (traffic.Fleet: each lane validates one held session
// per tick), from the history alone, by two sound real-time rules:
//
//   - a pod's frame is valid while its lease is CERTAINLY live — from the
//     return of the acquire or successful renew that (re)started its TTL
//     until that call's start plus ttl minus slack, and until its release
//     began (as MigrationSingleAuthority) — whatever phase the pod runs and
//     wherever the lease lives (the table: A/B validate the union pair);
//   - a frame below a generation whose acquire was acknowledged before the
//     validate began is stale.
//
// Calls inside neither are not judged; fewer than minJudged judged is Unknown.
func PodValidates(ops []history.MigrationOp, ttl, slack time.Duration, minJudged int) Result {
	const name = "pod-validates"
	type leaseKey struct {
		session, owner string
		gen            int64
	}
	type window struct{ from, to time.Duration }
	live := map[leaseKey][]window{}
	released := map[leaseKey]time.Duration{}
	acked := map[string][]history.MigrationOp{}
	for _, op := range ops {
		k := leaseKey{op.Session, op.Owner, op.Gen}
		switch {
		case op.Kind == history.OpRelease && (op.OK || op.Unknown):
			if t, ok := released[k]; !ok || op.Call < t {
				released[k] = op.Call
			}
		case op.Unknown || !op.OK:
		case op.Kind == history.OpAcquire || op.Kind == history.OpRenew:
			live[k] = append(live[k], window{op.Return, op.Call + ttl - slack})
			if op.Kind == history.OpAcquire {
				acked[op.Session] = append(acked[op.Session], op)
			}
		}
	}
	judged := map[string]int{}
	var bad []string
	n := 0
	for _, op := range ops {
		if op.Kind != history.OpValidate || op.Unknown {
			continue
		}
		k := leaseKey{op.Session, op.Owner, op.Gen}
		end, rel := released[k]
		certain := false
		for _, w := range live[k] {
			to := w.to
			if rel {
				to = min(to, end)
			}
			if w.from <= op.Call && op.Return < to {
				certain = true
				break
			}
		}
		var above int64
		for _, a := range acked[op.Session] {
			if a.Return < op.Call {
				above = max(above, a.Gen)
			}
		}
		want := 0
		switch {
		case certain:
			want = int(fencing.VerdictValid)
		case op.Gen < above:
			want = int(fencing.VerdictStale)
		default:
			continue
		}
		n++
		judged[op.Phase]++
		if op.Verdict != want {
			why := "its lease was certainly live"
			if want == int(fencing.VerdictStale) {
				why = fmt.Sprintf("generation %d was acknowledged before", above)
			}
			bad = append(bad, fmt.Sprintf("%v [pod %s, phase %s, lane %s]: want %s, %s", op.FencingOp, op.Pod, op.Phase, op.Lane, fencing.Verdict(want), why))
		}
	}
	var per []string
	for _, p := range fencing.Phases {
		per = append(per, fmt.Sprintf("%s %d", p, judged[string(p)]))
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 3), "\n"), "%d of %d judged pod validates wrong (judged per phase: %s)", len(bad), n, strings.Join(per, ", "))
	}
	if n < minJudged {
		return unknown(name, "only %d pod validates judged, need %d", n, minJudged)
	}
	return pass(name, "%d pod validates of their own frames judged (per phase: %s), every one as the real-time rules say", n, strings.Join(per, ", "))
}

// PodValidatesOn is PodValidates over the validates of one lane's pods,
// its message naming the lane ("reliable lane: …"), so a result that
// combines the lanes says which one a verdict is about.
func PodValidatesOn(lane string, ops []history.MigrationOp, ttl, slack time.Duration, minJudged int) Result {
	r := PodValidates(ops, ttl, slack, minJudged)
	r.Message = lane + " lane: " + r.Message
	return r
}
