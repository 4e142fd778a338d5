package gomut

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/mutate/luamut"
	"github.com/slotgate/slotgate/report"
)

const fixtureGo = `package p

import (
	"context"
	_ "embed"

	cl "example.com/m/impl/client"
)

//go:embed lua/s.lua
var src string

type Store struct{ s *cl.Script }

func New() *Store { return &Store{s: cl.NewScript("p/s", src)} }

func (st *Store) Put(ctx context.Context, p cl.Pool) error {
	_, _, err := cl.RunScript(ctx, p, st.s, []string{"k"}, "v")
	return err
}
`

const fixtureLua = `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', 1000)
return 1
`

func luaFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "p", "lua"), 0o755))
	must(os.WriteFile(filepath.Join(root, "p", "a.go"), []byte(fixtureGo), 0o644))
	must(os.WriteFile(filepath.Join(root, "p", "a_test.go"), []byte("package p\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "p", "lua", "s.lua"), []byte(fixtureLua), 0o644))
	return root
}

var luaFixtureTarget = LuaTarget{Package: "p", Script: "lua/s.lua", Runs: "Store.Put", Rows: []report.RowID{report.RowMarconiRestart}}

// TestGenerateLuaSchemata: every luamut mutant of the script, each with
// the sha1 of its script, the coverage anchor on the RunScript call of
// Runs, and one schemata build that wraps NewScript's source on its own
// line and holds every mutated script under its id.
func TestGenerateLuaSchemata(t *testing.T) {
	root := luaFixture(t)
	sp := SchemaPkg{Path: "example.com/m/mutate/schema"}
	ms, s, err := GenerateLuaSchemata(root, []LuaTarget{luaFixtureTarget}, sp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := luamut.Generate("p/lua/s.lua", fixtureLua)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(want) || len(ms) == 0 {
		t.Fatalf("%d mutants, luamut generates %d", len(ms), len(want))
	}
	for i, m := range ms {
		sum := sha1.Sum([]byte(m.Source))
		if m.ID != want[i].ID || m.Served != hex.EncodeToString(sum[:]) || !s.In[m.ID] {
			t.Errorf("mutant %d: id %s (want %s), served %s, in schemata %v", i, m.ID, want[i].ID, m.Served, s.In[m.ID])
		}
		c := m.Cover
		if c.ID != m.ID || c.File != "p/a.go" || c.Func != "Store.Put" || c.Span.StartLine != 18 || c.Span.StartCol != 15 || c.Served != m.Served || c.Original == "" || c.Original == c.Served || c.FuncSpan.StartLine != 17 {
			t.Errorf("mutant %s: coverage anchor %+v, want the RunScript call of Store.Put (p/a.go:18:15)", m.ID, c)
		}
	}
	if len(s.Files) != 2 {
		t.Fatalf("schemata files %v, want p/a.go and p/%s", keys(s.Files), LuaMutantsFile)
	}
	a := s.Files["p/a.go"]
	if bytes.Count(a, []byte("\n")) != strings.Count(fixtureGo, "\n") {
		t.Errorf("the wrap moved lines:\n%s", a)
	}
	if !bytes.Contains(a, []byte(`cl.NewScript("p/s", slotgatescript.Source(src, slotgateLuaMutants))`)) ||
		!bytes.HasPrefix(a, []byte(`package p; import slotgatescript "example.com/m/mutate/schema/script"`)) {
		t.Errorf("NewScript not wrapped:\n%s", a)
	}
	if bytes.Contains(a, []byte("RunScript(ctx, p, slotgatescript")) {
		t.Errorf("RunScript wrapped too:\n%s", a)
	}
	gen := s.Files["p/"+LuaMutantsFile]
	if _, err := parser.ParseFile(token.NewFileSet(), LuaMutantsFile, gen, 0); err != nil {
		t.Fatalf("generated file does not parse: %v\n%s", err, gen)
	}
	for _, m := range ms {
		if !bytes.Contains(gen, []byte(`"`+m.ID+`"`)) {
			t.Errorf("generated file lacks %s", m.ID)
		}
	}
	// The coverage anchor moves with the schema file (same lines here).
	if got := s.Locate(ms[0].Cover); got.Span.StartLine != 18 {
		t.Errorf("Locate moved the anchor to %+v", got.Span)
	}
}

// TestGenerateLuaSchemataRefuses: a package that never makes a script
// (nothing to serve the mutant through) and a Runs function that runs
// none (nothing to cover it by) are errors, not silent survivors.
func TestGenerateLuaSchemataRefuses(t *testing.T) {
	root := luaFixture(t)
	sp := SchemaPkg{Path: "example.com/m/mutate/schema"}
	bad := luaFixtureTarget
	bad.Runs = "New"
	if _, _, err := GenerateLuaSchemata(root, []LuaTarget{bad}, sp); err == nil || !strings.Contains(err.Error(), "calls no client.RunScript") {
		t.Errorf("Runs without RunScript: err %v", err)
	}
	src := strings.Replace(fixtureGo, `cl.NewScript("p/s", src)`, `&cl.Script{Source: src}`, 1)
	if err := os.WriteFile(filepath.Join(root, "p", "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := GenerateLuaSchemata(root, []LuaTarget{luaFixtureTarget}, sp); err == nil || !strings.Contains(err.Error(), "no client.NewScript") {
		t.Errorf("no NewScript: err %v", err)
	}
}

// TestDefaultLuaTargets: impl's embedded Marconi scripts all generate,
// each package's one NewScript site is wrapped, and ids are unique.
func TestDefaultLuaTargets(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ms, s, err := GenerateLuaSchemata(root, DefaultLuaTargets, SchemaPkg{Path: "github.com/slotgate/slotgate/mutate/schema"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	per := map[string]int{}
	for _, m := range ms {
		if seen[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		seen[m.ID] = true
		per[m.File]++
	}
	for _, tg := range DefaultLuaTargets {
		if per[tg.Package+"/"+tg.Script] == 0 {
			t.Errorf("%s/%s: no mutant", tg.Package, tg.Script)
		}
	}
	for _, f := range []string{"impl/marconi/store.go", "impl/marconi/audit/writer.go"} {
		if n := bytes.Count(s.Files[f], []byte("slotgatescript.Source(")); n != 1 {
			t.Errorf("%s: %d wrapped NewScript sources, want 1", f, n)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
