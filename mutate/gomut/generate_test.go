package gomut

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

func fixture(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var fixtureTarget = Target{Package: "guard", Rows: []report.RowID{report.RowRegistry}}

// idShape is a Go mutant ID: package, function, operator, 8 hex digits and
// an optional ordinal.
var idShape = regexp.MustCompile(`^[a-z/]+:[A-Za-z.]+:[a-z-]+:[0-9a-f]{8}(#[2-9][0-9]*)?$`)

// siteLabel names ms[i] by its function, operator and rank among that
// function's mutants of that operator ("Admit:swap-cmp#2"): how the fixture
// test picks a mutant without spelling its hash.
func siteLabel(ms []Mutant, i int) string {
	n := 0
	for _, m := range ms[:i+1] {
		if m.Func == ms[i].Func && m.Operator == ms[i].Operator {
			n++
		}
	}
	return fmt.Sprintf("%s:%s#%d", ms[i].Func, ms[i].Operator, n)
}

func TestGenerateFixture(t *testing.T) {
	ms, st, err := GenerateStats(fixture(t), []Target{fixtureTarget}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	byID := map[string]Mutant{}
	for i, m := range ms {
		ids = append(ids, m.ID)
		byID[siteLabel(ms, i)] = m
		if !idShape.MatchString(m.ID) || !strings.HasPrefix(m.ID, "guard:"+m.Func+":"+m.Operator+":") {
			t.Errorf("id %q: want guard:%s:%s:<8 hex>", m.ID, m.Func, m.Operator)
		}
	}
	t.Logf("stats %+v\n%s", st, strings.Join(ids, "\n"))
	want := map[string]string{ // site label → a line the mutated file must contain
		"Admit:negate-cond#1":    "if !(n < limit && name != \"\") {",
		"Admit:swap-cmp#1":       "if n <= limit && name != \"\" {",
		"Admit:swap-cmp#2":       "if n < limit && name == \"\" {",
		"Load:drop-err-return#1": "if err != nil {\n\t}",
		"parse:negate-cond#1":    "if !(s == \"\") {",
		"Query:drop-bound#1":     `"ZRANGEBYSCORE", key, "-inf", "+inf", "LIMIT"`,
		"Query:drop-bound#2":     `return []string{"ZRANGEBYSCORE", key, min, "+inf"}`,
		"Renew:ttl-off-by-one#1": "return ttl / 2",
		"Renew:ttl-off-by-one#2": "return ttl / 4",
		"Notify:chan-drop#1":     "select {\n\tcase ch <- v:\n\tdefault:\n\t}",
		"Wait:chan-drop#1":       "case <-done:\n\tdefault:\n\t}",
	}
	for id, line := range want {
		m, ok := byID[id]
		if !ok {
			t.Errorf("missing mutant %s", id)
			continue
		}
		if !strings.Contains(string(m.Content), line) {
			t.Errorf("%s: content lacks %q:\n%s", id, line, m.Diff)
		}
		if m.Diff == "" || !strings.HasPrefix(m.Diff, "--- a/guard/guard.go\n+++ b/guard/guard.go\n@@ ") {
			t.Errorf("%s: diff %q", id, m.Diff)
		}
		if !reflect.DeepEqual(m.Rows, fixtureTarget.Rows) {
			t.Errorf("%s: rows %v", id, m.Rows)
		}
	}
	if len(ms) != len(want) {
		t.Errorf("got %d mutants, want %d (the Mutant switch, the counting loop and == alone are left alone)", len(ms), len(want))
	}
	// Wrap's dropped error return leaves `what` unused: discarded by the type check.
	if st.DiscardedBy["type-check"] != 1 || st.Candidates != st.Compiled+st.Discarded {
		t.Errorf("stats %+v: want one type-check discard", st)
	}
	if st.ByOperator[OpChanDrop] != 2 || st.ByOperator[OpDropBound] != 2 || st.ByOperator[OpTTLOffByOne] != 2 {
		t.Errorf("by operator %v", st.ByOperator)
	}
	if m := byID["Admit:swap-cmp#1"]; m.Line != 18 || m.Func != "Admit" || m.Operator != OpSwapCmp || m.File != "guard/guard.go" ||
		m.Span != (Span{StartLine: 18, StartCol: 5, EndLine: 18, EndCol: 14}) || m.FuncSpan.StartLine != 17 || m.FuncSpan.EndLine != 25 {
		t.Errorf("swap-cmp#1 = %+v", m)
	}
}

func TestGenerateDiff(t *testing.T) {
	ms, err := Generate(fixture(t), []Target{{Package: "guard", Funcs: []string{"Renew"}}}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("got %d mutants of Renew", len(ms))
	}
	want := "--- a/guard/guard.go\n+++ b/guard/guard.go\n@@ -47,7 +47,7 @@\n \n // Renew is TTL arithmetic.\n func Renew(ttl time.Duration) time.Duration {\n-\treturn ttl / 3\n+\treturn ttl / 2\n }\n \n // Wrap loses its only use of what when the error return is dropped: that\n"
	if ms[0].Diff != want {
		t.Errorf("diff:\n%s\nwant:\n%s", ms[0].Diff, want)
	}
}

func TestGenerateDeterministicAndSampled(t *testing.T) {
	root := fixture(t)
	all1, err := Generate(root, []Target{fixtureTarget}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	all2, _ := Generate(root, []Target{fixtureTarget}, 0, 99)
	if !reflect.DeepEqual(all1, all2) {
		t.Fatal("two generations differ")
	}
	pos := map[string]int{}
	for i, m := range all1 {
		pos[m.ID] = i
	}
	s1, _ := Generate(root, []Target{fixtureTarget}, 4, 7)
	s2, _ := Generate(root, []Target{fixtureTarget}, 4, 7)
	s3, _ := Generate(root, []Target{fixtureTarget}, 4, 8)
	if len(s1) != 4 || !reflect.DeepEqual(s1, s2) {
		t.Fatalf("same seed, different samples: %d %d", len(s1), len(s2))
	}
	if reflect.DeepEqual(s1, s3) {
		t.Error("seeds 7 and 8 drew the same sample (possible, but not for this fixture)")
	}
	if !sort.SliceIsSorted(s1, func(i, j int) bool { return pos[s1[i].ID] < pos[s1[j].ID] }) {
		t.Error("a sample is not in generation order")
	}
	big, _ := Generate(root, []Target{fixtureTarget}, 1000, 7)
	if len(big) != len(all1) {
		t.Errorf("max above the count: %d of %d", len(big), len(all1))
	}
}

func TestGenerateUnknownFunc(t *testing.T) {
	_, err := Generate(fixture(t), []Target{{Package: "guard", Funcs: []string{"Admit", "Nope"}}}, 0, 1)
	if err == nil || !strings.Contains(err.Error(), "no function Nope") {
		t.Fatalf("err = %v", err)
	}
}

func TestKnownEquivalentSetsReason(t *testing.T) {
	renew := []Target{{Package: "guard", Funcs: []string{"Renew"}}}
	plain, err := Generate(fixture(t), renew, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	id := plain[0].ID
	KnownEquivalent[id] = "fixture reason"
	defer delete(KnownEquivalent, id)
	ms, st, err := GenerateStats(fixture(t), renew, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].Equivalent != "fixture reason" || ms[1].Equivalent != "" || st.Equivalent != 1 {
		t.Errorf("equivalent: %q %q %+v", ms[0].Equivalent, ms[1].Equivalent, st)
	}
}

// TestDefaultTargetsGenerate keeps DefaultTargets in step with impl: every
// named function exists and every package yields mutants that compile.
func TestDefaultTargetsGenerate(t *testing.T) {
	root, _ := filepath.Abs("../..")
	ms, st, err := GenerateStats(root, DefaultTargets, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, m := range ms {
		per[filepath.Dir(m.File)]++
		if len(m.Rows) == 0 {
			t.Errorf("%s: no rows", m.ID)
		}
	}
	for _, tg := range DefaultTargets {
		if per[tg.Package] == 0 {
			t.Errorf("%s: no mutants", tg.Package)
		}
	}
	for id := range KnownEquivalent {
		found := false
		for _, m := range ms {
			found = found || m.ID == id
		}
		if !found {
			t.Errorf("KnownEquivalent names %s, which DefaultTargets no longer generates", id)
		}
	}
	t.Logf("%+v per package %v", st, per)
}

func TestSampleStratified(t *testing.T) {
	var all []Mutant
	var per [][]int
	for tg, n := range []int{10, 2, 30} {
		var idx []int
		for i := 0; i < n; i++ {
			idx = append(idx, len(all))
			all = append(all, Mutant{ID: strconv.Itoa(tg) + "/" + strconv.Itoa(i), File: strconv.Itoa(tg)})
		}
		per = append(per, idx)
	}
	got := sample(all, per, 7, 3)
	count := map[string]int{}
	for _, m := range got {
		count[m.File]++
	}
	if len(got) != 7 || count["0"] != 3 || count["1"] != 2 || count["2"] != 2 {
		t.Errorf("sample of 7 over targets of 10, 2, 30: %v", count)
	}
	if !reflect.DeepEqual(got, sample(all, per, 7, 3)) {
		t.Error("same seed, different sample")
	}
}
