package gomut

// Listing helpers for measurements (skipped unless their variable is set):
// GOMUT_COUNT=1 counts DefaultTargets per package, GOMUT_LIST=1 prints every
// mutant with its change, GOMUT_SAMPLE=N GOMUT_SEED=S prints a sample's IDs.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCountAll(t *testing.T) {
	if os.Getenv("GOMUT_COUNT") == "" {
		t.Skip()
	}
	root, _ := filepath.Abs("../..")
	for _, tg := range DefaultTargets {
		p := tg.Package
		ms, st, err := GenerateStats(root, []Target{tg}, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", p, st)
		per := map[string]int{}
		for _, m := range ms {
			per[m.Func]++
		}
		t.Logf("%v", per)
	}
}

func TestListDefault(t *testing.T) {
	if os.Getenv("GOMUT_LIST") == "" {
		t.Skip()
	}
	root, _ := filepath.Abs("../..")
	ms, _ := Generate(root, DefaultTargets, 0, 1)
	for _, m := range ms {
		var ch []string
		for _, l := range strings.Split(m.Diff, "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				ch = append(ch, strings.TrimSpace(l[1:]))
			}
		}
		fmt.Printf("%s L%d | %s\n", m.ID, m.Line, strings.Join(ch, " ⏎ "))
	}
}

func TestListSample(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GOMUT_SAMPLE"))
	if n == 0 {
		t.Skip()
	}
	seed, _ := strconv.ParseInt(os.Getenv("GOMUT_SEED"), 10, 64)
	root, _ := filepath.Abs("../..")
	ms, _ := Generate(root, DefaultTargets, n, seed)
	for _, m := range ms {
		fmt.Println(m.ID)
	}
}
