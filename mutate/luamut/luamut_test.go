package luamut

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/impl/fencing"
)

func TestGenerateCoversEveryOperatorOnTheFencingScripts(t *testing.T) {
	set := fencing.Embedded()
	byOp := map[Operator]int{}
	total := 0
	ids := map[string]bool{}
	for _, f := range set.Files() {
		src, err := fs.ReadFile(fencing.EmbeddedFS(), f.File)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := Generate(f.File, string(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if err := Compiles(m.File, m.Source); err != nil {
				t.Fatalf("%s does not compile: %v", m.ID, err)
			}
			if ids[m.ID] {
				t.Fatalf("duplicate id %s", m.ID)
			}
			ids[m.ID] = true
			if !strings.Contains(m.Diff, "\n-") && !strings.Contains(m.Diff, "\n+") {
				t.Fatalf("%s: empty diff", m.ID)
			}
			byOp[m.Operator]++
		}
		total += len(ms)
	}
	t.Logf("%d mutants: %v", total, byOp)
	for _, op := range []Operator{OpRelational, OpPlusOne, OpDropGuard, OpSwapKeys, OpKeyFromArgv, OpKeyConcat, OpTTL, OpDropCall} {
		if byOp[op] == 0 {
			t.Errorf("no %s mutant", op)
		}
	}
}

func TestGenerateExamples(t *testing.T) {
	src := "-- a < b in a comment, 'PX' too\nif redis.call('GET', KEYS[1]) == ARGV[2] .. ':' .. ARGV[1] then\n  return redis.call('PEXPIRE', KEYS[1], ARGV[3])\nend\nlocal s = '<='\nredis.call('SET', KEYS[2], 1 + 1, 'PX', ARGV[2])\nreturn 0\n"
	ms, err := Generate("x.lua", src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"== → ~=": false, "guard removed: if … return … end": false, "KEYS[1] → KEYS[2]": false,
		"+ 1 → + 0": false, "TTL ARGV[3] → ARGV[3] * 10": false, "SET without PX ARGV[2] (a lease that never expires)": false,
		"redis.call('SET', …) removed": false, "redis.call('GET', …) → false": false,
	}
	for _, m := range ms {
		if _, ok := want[m.Desc]; ok {
			want[m.Desc] = true
		}
		if strings.Contains(m.Diff, "\n--- a <") || strings.Contains(m.Desc, "'<='") {
			t.Errorf("%s edits a comment or string: %s", m.ID, m.Diff)
		}
	}
	for d, seen := range want {
		if !seen {
			t.Errorf("missing mutant %q", d)
		}
	}
	again, _ := Generate("x.lua", src)
	for i := range ms {
		if ms[i].ID != again[i].ID {
			t.Fatal("generation is not deterministic")
		}
	}
	if got := Sample(ms, 3, 7); len(got) != 3 || got[0].ID != Sample(ms, 3, 7)[0].ID {
		t.Fatal("sample is not deterministic")
	}
}

func TestGenerateRefusesBrokenLua(t *testing.T) {
	if _, err := Generate("bad.lua", "if x then"); err == nil {
		t.Fatal("a script that does not parse was mutated")
	}
}
