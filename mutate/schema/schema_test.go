package schema

import "testing"

// TestSwitches: with no mutant active every helper is the operation it
// stands for; with its id active, the mutated one; another id changes
// nothing.
func TestSwitches(t *testing.T) {
	defer func(a string) { active = a }(active)
	type named bool
	for _, tc := range []struct {
		active string
		on     bool
	}{{"", false}, {"other", false}, {"id", true}} {
		active = tc.active
		if On("id") != tc.on {
			t.Errorf("active %q: On = %v", tc.active, !tc.on)
		}
		if On("") {
			t.Errorf("active %q: On(\"\") is true", tc.active)
		}
		flip := func(b bool) bool { return b != tc.on }
		for _, p := range [][2]int{{1, 2}, {2, 2}, {3, 2}} {
			a, b := p[0], p[1]
			checks := []struct {
				name      string
				got, want bool
			}{
				{"Lt", Lt("id", a, b), map[bool]bool{false: a < b, true: a <= b}[tc.on]},
				{"Le", Le("id", a, b), map[bool]bool{false: a <= b, true: a < b}[tc.on]},
				{"Gt", Gt("id", a, b), map[bool]bool{false: a > b, true: a >= b}[tc.on]},
				{"Ge", Ge("id", a, b), map[bool]bool{false: a >= b, true: a > b}[tc.on]},
				{"Eq", Eq("id", a, b), flip(a == b)},
				{"Ne", Ne("id", a, b), flip(a != b)},
				{"Not", Not("id", a < b), flip(a < b)},
				{"Not named", bool(Not("id", named(a < b))), flip(a < b)},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("active %q: %s(%d, %d) = %v, want %v", tc.active, c.name, a, b, c.got, c.want)
				}
			}
		}
		if got, want := Pick("id", "-inf", "5"), map[bool]string{false: "5", true: "-inf"}[tc.on]; got != want {
			t.Errorf("active %q: Pick = %q, want %q", tc.active, got, want)
		}
	}
}
