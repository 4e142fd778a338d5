package check

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/slotgate/slotgate/history"
)

// replayable lists the pure checkers a scored check may be judged through
// (Judge), so `slotgate check --from` can run each again on its stored
// input. A checker joins by being listed; its arguments must survive a JSON
// round trip (exported fields, no funcs or interfaces).
var replayable = []any{
	UndeclaredKeyHazard,
	DrillDispatch, DrillAccounted, HaltsWithin,
	FencingLinearizable, SingleAuthority, GenerationsIncrease, GuardsHold, FencingInvariants, FencingAcrossFailover, DirectoryResumes,
	MarconiExactlyOnce, MarconiLossBudget, MarconiShadowEqual, MarconiPipelineErrors,
	MarconiHotPathIO, MarconiSendsDelivered, MarconiStaleRoutes, MarconiHookTransitions,
	MarconiCacheHealth, MarconiRehydrated, MarconiAuditLedger,
	// The Marconi rows' remaining checkers and their compositions
	// (marconi_controls.go), so every Marconi check replays (issue 16).
	MarconiNoSubscribe, MarconiQueueDefaults, MarconiEngagement,
	MarconiStageFlagsLedger, MarconiStageFlagsRefusals, MarconiMetricsAgree, MarconiMetricsExposed,
	MarconiObligations, MarconiObligationCalls, AuditCapsExact,
	MarconiReadsOneAtATime, MarconiStreamResume, MarconiTrimKeepsUnconsumed, MarconiLagAlert, MarconiKillPremise,
	ArchiverKilled, MarconiSendsAnswered, MarconiUnrunnable, AuditWritersOutpaced,
	MarconiHookAndStaleRoutes, MarconiStaleRoutesFailing, MarconiCacheHealthFailing, MarconiDoubleWriteSeen,
	MarconiMasterTermFailing, MarconiReleasedUnindexed, MarconiStaleWriterFenced, MarconiLostReplyOnce,
	MigrationSingleAuthority, MigrationGenerations, ObservedSingleAuthority, OldKeyspaceDrained,
	NewKeyspaceDrained, MigrationErrors, MigrationErrorsAround, MigrationAcrossFailover, LeasesKeptAcrossFailover,
	NoErrors, RefusedWith,
	PartitionDispatch, PartitionAccounted, PausedPodsFenced,
	PresencePositional, PresenceRetriesCounted, GateDoors, RegistrySkipsClassified, NegotiatedProtocol, ReplyShapes,
	BroadcastReachesAll, ShardConfined, PushDelivery,
	ReadSide, PodValidates,
	RegistryComplete, RegistryNoStale, RegistryAttested, RegistryBounded, RegistryErrorsOutside,
	ReplicaReadsKept, ReplicaResynced,
	RoutingAcknowledged, RoutingCounters, RoutingOnlyUnknown,
	SlotMathAgrees, PairsShareSlot, StragglersDrained,
	SubscriptionsDelivered, SubscriptionErrors,
	TelemetryExposed, TelemetryAgrees, TelemetryHotSlot, TelemetryRedirects,
	// Issue 16: the non-Marconi rows' compositions, made checkers.
	LoudRefusal, Happened, WithinBudget, PodValidatesOn, ScanSubset, ReplyShapesLoud, TelemetryPhaseC,
	CrossSlotFree, StaticClean, HandTableAgrees, BadCorpus, DeclarationsNeeded, WorkloadsExercised,
	TraceConformance, ScriptsDiverge, ReadConformance, ReadScriptsDiverge,
}

// allChecker is the name a combined result's call carries (All).
const allChecker = "All"

var registry = func() map[string]reflect.Value {
	m := make(map[string]reflect.Value, len(replayable))
	result := reflect.TypeOf(Result{})
	for _, fn := range replayable {
		v := reflect.ValueOf(fn)
		t := v.Type()
		if t.NumOut() != 1 || t.Out(0) != result || t.IsVariadic() {
			panic(fmt.Sprintf("check: %s is not a replayable checker (want func(...) Result)", funcName(v)))
		}
		m[funcName(v)] = v
	}
	return m
}()

func funcName(v reflect.Value) string {
	name := runtime.FuncForPC(v.Pointer()).Name()
	return name[strings.LastIndex(name, ".")+1:]
}

// Judge runs the registered pure checker fn on args and returns its result
// with the call that reached it (Result.Call), so the harness can persist
// it and `slotgate check --from` can run it again. The call is kept only
// when the offline re-check will reach the same result: its inputs read
// back from JSON equal to the arguments, or else the checker, run again on
// the inputs as read back, gives an identical result. An input JSON cannot
// carry (a NaN, a field it drops that the verdict depends on) leaves the
// result as the direct call's, with no call (listed "not persisted"
// offline), never a different verdict.
func Judge(fn any, args ...any) Result {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func {
		return unknown("judge", "Judge(%T): not a checker function", fn)
	}
	direct, err := callDirect(v, args)
	if err != nil {
		return unknown(funcName(v), "%v", err)
	}
	name := funcName(v)
	if _, ok := registry[name]; !ok {
		return direct
	}
	call := history.Call{Checker: name, Input: make([]json.RawMessage, len(args))}
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return direct
		}
		call.Input[i] = b
	}
	// The common case costs one decode, not a second run of the checker
	// (porcupine's search can take seconds): when every input reads back
	// from JSON equal to what the checker was given, the replay would see
	// exactly this call. Otherwise (a time.Time's monotonic reading, an
	// unexported field) the checker runs again on what the replay will see.
	// Only a verdict (pass or fail) takes it: an unknown can come from a
	// checker's own time budget (porcupine's 30 s search under load) that
	// the replay may not hit, so it runs again and is kept only when the
	// replay agrees (review: a stored timeout replayed as a pass).
	if (direct.Status == Pass || direct.Status == Fail) && decodedEqual(v.Type(), args, call.Input) {
		direct.Call = &call
		return direct.sealed()
	}
	replayed, err := Replay(call)
	if err != nil || !sameResult(direct, replayed) {
		return direct
	}
	return replayed
}

// decodedEqual says whether each raw input decodes into the checker's
// parameter type as a value deeply equal to the argument given.
func decodedEqual(t reflect.Type, args []any, raw []json.RawMessage) bool {
	for i, a := range args {
		p := reflect.New(t.In(i))
		if err := json.Unmarshal(raw[i], p.Interface()); err != nil {
			return false
		}
		want := reflect.Zero(t.In(i))
		if a != nil {
			want = reflect.ValueOf(a)
			if want.Type() != t.In(i) {
				want = want.Convert(t.In(i))
			}
		}
		if !reflect.DeepEqual(p.Elem().Interface(), want.Interface()) {
			return false
		}
	}
	return true
}

// callDirect calls fn with args as given.
func callDirect(fn reflect.Value, args []any) (Result, error) {
	t := fn.Type()
	if t.NumOut() != 1 || t.Out(0) != reflect.TypeOf(Result{}) || t.IsVariadic() || t.NumIn() != len(args) {
		return Result{}, fmt.Errorf("Judge(%s): not a checker taking %d arguments", funcName(fn), len(args))
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if a == nil {
			in[i] = reflect.Zero(t.In(i))
			continue
		}
		av := reflect.ValueOf(a)
		if !av.Type().AssignableTo(t.In(i)) {
			if !av.Type().ConvertibleTo(t.In(i)) {
				return Result{}, fmt.Errorf("Judge(%s): argument %d is %s, want %s", funcName(fn), i, av.Type(), t.In(i))
			}
			av = av.Convert(t.In(i))
		}
		in[i] = av
	}
	return fn.Call(in)[0].Interface().(Result), nil
}

func sameResult(a, b Result) bool {
	a.Call, b.Call, a.judged, b.judged = nil, nil, "", ""
	return reflect.DeepEqual(a, b)
}

// Replay runs a stored call again: the checker it names on its decoded
// input (for All, its parts first). The result carries the call.
func Replay(c history.Call) (Result, error) {
	if c.Checker == allChecker {
		var name string
		if len(c.Input) != 1 || json.Unmarshal(c.Input[0], &name) != nil {
			return Result{}, fmt.Errorf("checker All: want its name as the one input")
		}
		parts := make([]Result, len(c.Parts))
		for i, p := range c.Parts {
			r, err := Replay(p)
			if err != nil {
				return Result{}, err
			}
			parts[i] = r
		}
		return All(name, parts...), nil
	}
	fn, ok := registry[c.Checker]
	if !ok {
		return Result{}, fmt.Errorf("checker %s is not registered for replay", c.Checker)
	}
	t := fn.Type()
	if len(c.Input) != t.NumIn() {
		return Result{}, fmt.Errorf("checker %s: %d inputs, want %d", c.Checker, len(c.Input), t.NumIn())
	}
	in := make([]reflect.Value, len(c.Input))
	for i, raw := range c.Input {
		p := reflect.New(t.In(i))
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return Result{}, fmt.Errorf("checker %s: input %d: %w", c.Checker, i, err)
		}
		in[i] = p.Elem()
	}
	r := fn.Call(in)[0].Interface().(Result)
	call := c
	r.Call = &call
	return r.sealed(), nil
}
