package check

import (
	"fmt"
	"reflect"
)

// Register adds the pure checkers of a row's own judge package (a row that
// lives in one folder, rows/<row>/judge) to the checkers Judge persists and
// Replay runs, so its checks replay offline like those listed in
// replayable. Call it from the judge package's init; the CLI links that
// package, so `slotgate check --from` finds the names. A checker is keyed
// by its function name, so a name already taken, or a function that is not
// func(...) Result, panics at start-up rather than replaying the wrong
// checker.
func Register(fns ...any) {
	result := reflect.TypeOf(Result{})
	for _, fn := range fns {
		v := reflect.ValueOf(fn)
		if v.Kind() != reflect.Func {
			panic(fmt.Sprintf("check: Register(%T): not a function", fn))
		}
		t := v.Type()
		name := funcName(v)
		if t.NumOut() != 1 || t.Out(0) != result || t.IsVariadic() {
			panic(fmt.Sprintf("check: %s is not a replayable checker (want func(...) Result)", name))
		}
		if _, taken := registry[name]; taken {
			panic(fmt.Sprintf("check: a checker named %s is registered already", name))
		}
		registry[name] = v
	}
}
