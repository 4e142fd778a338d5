package check

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/slotgate/slotgate/history"
)

// allChecker is the name a combined result's call carries (All).
const allChecker = "All"

func sameResult(a, b Result) bool {
	a.Call, b.Call, a.judged, b.judged = nil, nil, "", ""
	return reflect.DeepEqual(a, b)
}

// Replay runs a stored call again: the checker it names (a Define'd
// checker's stable name or alias) on its decoded input, for All and
// SilentOnly their parts first. The result carries the call.
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
	if c.Checker == silentOnlyChecker {
		if len(c.Parts) != 2 {
			return Result{}, fmt.Errorf("checker SilentOnly: want two parts, silent and loud, got %d", len(c.Parts))
		}
		silent, err := Replay(c.Parts[0])
		if err != nil {
			return Result{}, err
		}
		loud, err := Replay(c.Parts[1])
		if err != nil {
			return Result{}, err
		}
		return SilentOnly(silent, loud), nil
	}
	r, ok, err := replayTyped(c)
	if !ok {
		return Result{}, fmt.Errorf("checker %s is not registered for replay", c.Checker)
	}
	return r, err
}
