package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/slotgate/slotgate/history"
)

// Checker is a pure checker of one typed input, registered under a stable
// name (Define). Judge runs it and keeps the call — the name and the input
// as JSON — so the harness persists it and `slotgate check --from` runs it
// again by that name. A wrong input is a compile error, and renaming the
// Go function does not orphan stored histories: the name is data.
type Checker[In any] struct {
	name string
	fn   func(In) Result
}

// typedChecker is a Define'd checker as the replay sees it.
type typedChecker struct {
	name   string
	replay func(raw []json.RawMessage) (Result, error)
}

var (
	typedMu sync.RWMutex
	// typed maps every stable name and alias to its checker.
	typed = map[string]typedChecker{}
)

// Define registers fn under name, a stable identifier stored with every
// call ("<row>/<what>" by convention for a row's own checker), and under
// aliases: names earlier histories stored it under (the Go function name
// of a checker judged reflectively before it was typed), so they still
// replay. Call it in a package-level var of the checker's own
// package; a name or alias taken twice panics at start-up rather than
// replaying the wrong checker.
func Define[In any](name string, fn func(In) Result, aliases ...string) Checker[In] {
	if name == "" || fn == nil {
		panic("check.Define: a checker needs a name and a function")
	}
	c := Checker[In]{name: name, fn: fn}
	entry := typedChecker{name: name, replay: func(raw []json.RawMessage) (Result, error) {
		in, err := decodeInput[In](raw)
		if err != nil {
			return Result{}, fmt.Errorf("checker %s: %w", name, err)
		}
		return fn(in), nil
	}}
	typedMu.Lock()
	defer typedMu.Unlock()
	for _, n := range append([]string{name}, aliases...) {
		if _, taken := typed[n]; taken {
			panic(fmt.Sprintf("check.Define: a checker named %s is defined already", n))
		}
		typed[n] = entry
	}
	return c
}

// Name is the checker's stable name.
func (c Checker[In]) Name() string { return c.name }

// Judge runs the checker on in and returns its result with the call that
// reached it (Result.Call), so the harness persists it and `slotgate check
// --from` runs it again. The call is kept only when the offline re-check
// will reach the same result: in reads back from JSON equal to itself, or
// else the checker, run on what reads back, gives an identical result;
// otherwise (a NaN JSON cannot carry, a field it drops that the verdict
// depends on) the direct result stands with no call ("not persisted"
// offline), never a different verdict.
func (c Checker[In]) Judge(in In) Result {
	direct := c.fn(in)
	raw, err := json.Marshal(in)
	if err != nil {
		return direct
	}
	call := history.Call{Checker: c.name, Input: []json.RawMessage{raw}}
	// The common case costs one decode, not a second run of the checker
	// (porcupine's search can take seconds). Only a verdict takes it: an
	// unknown can come from a checker's own time budget (porcupine's 30 s
	// search under load) that the replay may not hit, so it runs again and
	// is kept only when the replay agrees — a stored timeout must never
	// replay as a pass.
	if direct.Status == Pass || direct.Status == Fail {
		var back In
		if json.Unmarshal(raw, &back) == nil && reflect.DeepEqual(back, in) {
			direct.Call = &call
			return direct.sealed()
		}
	}
	replayed, err := Replay(call)
	if err != nil || !sameResult(direct, replayed) {
		return direct
	}
	return replayed
}

// replayTyped runs a stored call of a Define'd checker (by its name or an
// alias); ok is false when no such checker is defined.
func replayTyped(c history.Call) (r Result, ok bool, err error) {
	typedMu.RLock()
	t, ok := typed[c.Checker]
	typedMu.RUnlock()
	if !ok {
		return Result{}, false, nil
	}
	r, err = t.replay(c.Input)
	if err != nil {
		return Result{}, true, err
	}
	call := c
	r.Call = &call
	return r.sealed(), true, nil
}

// decodeInput reads a stored call's input. A Define'd checker's own calls
// hold one input, the whole In. A call stored by a reflective checker of
// several arguments (under an alias) holds one input per argument: it
// decodes into a struct In whose exported fields are those arguments, in
// order — so a family moved to a one-input checker keeps its old
// histories replayable by declaring its input struct in the old argument
// order.
func decodeInput[In any](raw []json.RawMessage) (In, error) {
	var in In
	if len(raw) == 1 {
		// Strict: a stored input of another shape (an alias's old single
		// argument that In only wraps) is an error, never a zero-valued
		// input judged to a different verdict.
		dec := json.NewDecoder(bytes.NewReader(raw[0]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return in, fmt.Errorf("input: %w", err)
		}
		return in, nil
	}
	v := reflect.ValueOf(&in).Elem()
	if v.Kind() != reflect.Struct || len(raw) == 0 {
		return in, fmt.Errorf("%d inputs, want 1", len(raw))
	}
	var fields []reflect.Value
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			fields = append(fields, v.Field(i))
		}
	}
	if len(fields) != len(raw) {
		return in, fmt.Errorf("%d inputs, want 1 or one per field of %s (%d)", len(raw), v.Type(), len(fields))
	}
	for i, f := range fields {
		if err := json.Unmarshal(raw[i], f.Addr().Interface()); err != nil {
			return in, fmt.Errorf("input %d (%s.%s): %w", i, v.Type(), v.Type().Field(i).Name, err)
		}
	}
	return in, nil
}
