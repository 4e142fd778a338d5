package gomut

import (
	"os"
	"path/filepath"
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
