package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing/protocol"
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
	Phases     []protocol.Phase
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
		rule := model.ReadRuleFor(protocol.Phase(op.Phase), protocol.ReadCorrect)
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
			if tv == protocol.VerdictValid {
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
