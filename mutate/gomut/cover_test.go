package gomut

import (
	"strings"
	"testing"
)

// A profile of the fixture's guard package as `go tool covdata textfmt`
// writes it (blocks as the cover tool draws them: a block runs from the
// function's brace to the end of the if header, the body is its own).
const guardProfile = `mode: set
example.com/fixture/guard/guard.go:17.49,18.29 1 1
example.com/fixture/guard/guard.go:18.29,20.3 1 0
example.com/fixture/guard/guard.go:21.2,21.20 1 1
example.com/fixture/guard/guard.go:21.20,23.3 1 0
example.com/fixture/guard/guard.go:24.2,24.14 1 1
example.com/fixture/guard/guard.go:28.35,30.16 2 0
example.com/fixture/guard/guard.go:30.16,32.3 1 0
example.com/fixture/guard/guard.go:33.2,33.15 1 0
example.com/other/x.go:1.1,2.2 1 1
`

func TestParseProfileAndReaches(t *testing.T) {
	p, err := ParseProfile(strings.NewReader(guardProfile), "example.com/fixture")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || len(p["guard/guard.go"]) != 8 {
		t.Fatalf("profile %v: want the 8 blocks of guard/guard.go only", p)
	}
	if b := p["guard/guard.go"][1]; b.Span != (Span{18, 29, 20, 3}) || b.Count != 0 {
		t.Errorf("block 2 = %+v", b)
	}
	ms, err := Generate(fixture(t), []Target{{Package: "guard", Funcs: []string{"Admit", "Load"}, Rows: fixtureTarget.Rows}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		// Admit ran (its condition is in a covered block); Load never did.
		want := m.Func == "Admit"
		if got := p.Reaches(m); got != want {
			t.Errorf("%s (%s, span %+v): reaches %v, want %v", m.ID, m.Func, m.Span, got, want)
		}
	}
	if len(ms) < 4 {
		t.Fatalf("got %d mutants of Admit and Load", len(ms))
	}

	// The mutated node lies in an uncovered block only: not reached, even
	// though its function ran.
	m := Mutant{File: "guard/guard.go", Span: Span{22, 3, 22, 20}, FuncSpan: Span{17, 1, 25, 2}}
	if p.Reaches(m) {
		t.Error("a node inside the uncovered `if Mutant` body is reached")
	}
	// No block overlaps it (a switch case expression): its function's
	// coverage decides, conservatively.
	m.Span = Span{17, 1, 17, 40}
	if !p.Reaches(m) {
		t.Error("a node outside every block of a function that ran is not reached")
	}
	m.File, m.Span, m.FuncSpan = "guard/guard.go", Span{27, 1, 27, 10}, Span{28, 1, 34, 2}
	if p.Reaches(m) {
		t.Error("a node of a function that never ran is reached")
	}
	if p.Reaches(Mutant{File: "guard/none.go", Span: Span{1, 1, 2, 1}, FuncSpan: Span{1, 1, 9, 1}}) {
		t.Error("a file absent from the profile is reached")
	}
}

func TestParseProfileBad(t *testing.T) {
	for _, bad := range []string{"mode: set\nx.go 1 1\n", "mode: set\nm/x.go:1.1,2 1 1\n", "mode: set\nm/x.go:1.1,2.2 1 one\n"} {
		if _, err := ParseProfile(strings.NewReader(bad), "m"); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		a, b Span
		want bool
	}{
		{Span{1, 1, 1, 10}, Span{1, 5, 1, 6}, true},
		{Span{1, 1, 1, 10}, Span{1, 10, 1, 12}, false}, // end is exclusive
		{Span{1, 1, 3, 1}, Span{2, 40, 2, 50}, true},
		{Span{4, 1, 5, 1}, Span{2, 1, 3, 9}, false},
	} {
		if got := overlaps(c.a, c.b); got != c.want || overlaps(c.b, c.a) != c.want {
			t.Errorf("overlaps(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestReachesDropErrReturnNeedsTheBody: a dropped error return differs from
// the original only once an error takes the branch, so a run reaches it
// only if the body ran — Load ran, its error body did not: not reached.
func TestReachesDropErrReturnNeedsTheBody(t *testing.T) {
	ms, err := Generate(fixture(t), []Target{{Package: "guard", Funcs: []string{"Load"}, Rows: fixtureTarget.Rows}}, 0, 1)
	if err != nil || len(ms) != 1 || ms[0].Operator != OpDropErrReturn {
		t.Fatalf("mutants of Load: %v, %v: want one drop-err-return", ms, err)
	}
	for _, body := range []int{0, 1} {
		prof := "mode: set\n" +
			"example.com/fixture/guard/guard.go:28.35,30.16 2 1\n" +
			"example.com/fixture/guard/guard.go:30.16,32.3 1 " + string(rune('0'+body)) + "\n" +
			"example.com/fixture/guard/guard.go:33.2,33.15 1 1\n"
		p, err := ParseProfile(strings.NewReader(prof), "example.com/fixture")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Reaches(ms[0]); got != (body == 1) {
			t.Errorf("body ran %d times: reaches %v (span %+v)", body, got, ms[0].Span)
		}
	}
}
