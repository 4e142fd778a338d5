package gomut

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureCopy writes the fixture module to a temporary directory with
// guard.go replaced by src (and extra files added), for edits a test makes.
func fixtureCopy(t *testing.T, src string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(fixture(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"go.mod": string(gomod), "guard/guard.go": src}
	for k, v := range extra {
		files[k] = v
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cut removes the declaration of fn (its doc comment included) from src
// and returns the rest and the declaration.
func cut(t *testing.T, src, fn string) (string, string) {
	t.Helper()
	start := strings.Index(src, "\n// "+fn+" ")
	if start < 0 {
		t.Fatalf("no doc comment of %s", fn)
	}
	end := strings.Index(src[start:], "\n}\n")
	if end < 0 {
		t.Fatalf("no end of %s", fn)
	}
	end += start + len("\n}\n")
	return src[:start+1] + src[end:], src[start+1 : end]
}

func idsOf(t *testing.T, root string) map[string]string {
	t.Helper()
	ms, err := Generate(root, []Target{fixtureTarget}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{} // id → the file it mutates
	for _, m := range ms {
		if _, dup := out[m.ID]; dup {
			t.Errorf("id %s twice", m.ID)
		}
		out[m.ID] = m.File
	}
	return out
}

// TestIDStableWhenCodeMoves: a mutant's ID names the mutated code, not
// where it sits (ids that drift when code moves would make a
// KnownEquivalent entry or an --id list stale after an unrelated
// edit). Moving a function within its file, moving one to another file of
// the package, and editing other code of a function (a statement added
// above its sites) keep every ID.
func TestIDStableWhenCodeMoves(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(fixture(t), "guard", "guard.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(orig)
	base := idsOf(t, fixture(t))
	if len(base) == 0 {
		t.Fatal("no mutants")
	}
	same := func(name string, got map[string]string, files map[string]string) {
		t.Helper()
		var lost, gained []string
		for id := range base {
			if _, ok := got[id]; !ok {
				lost = append(lost, id)
			}
		}
		for id, f := range got {
			if _, ok := base[id]; !ok {
				gained = append(gained, id)
			}
			if want, ok := files[id]; ok && f != want {
				t.Errorf("%s: %s mutates %s, want %s", name, id, f, want)
			}
		}
		if len(lost)+len(gained) > 0 {
			slices.Sort(lost)
			slices.Sort(gained)
			t.Errorf("%s: ids changed:\n  lost %v\n  new  %v", name, lost, gained)
		}
	}

	// Admit moved from the top of the file to the bottom: every line of
	// it and of the functions after it shifts.
	rest, admit := cut(t, src, "Admit")
	same("Admit moved to the end of the file", idsOf(t, fixtureCopy(t, rest+"\n"+admit, nil)), nil)

	// Renew moved to a file of its own (the ID names the package, the
	// mutant's File follows the function).
	rest, renew := cut(t, src, "Renew")
	rest = strings.Replace(rest, "\t\"time\"\n", "", 1) // Renew was its only user
	moved := fixtureCopy(t, rest, map[string]string{"guard/renew.go": "package guard\n\nimport \"time\"\n\n" + renew})
	got := idsOf(t, moved)
	files := map[string]string{}
	for id := range got {
		if strings.HasPrefix(id, "guard:Renew:") {
			files[id] = "guard/renew.go"
		}
	}
	if len(files) != 2 {
		t.Errorf("Renew's mutants after the move: %v", files)
	}
	same("Renew moved to renew.go", got, files)

	// A statement added at the top of Load, above its error check: the old
	// per-function ordinal would not notice, a line number would.
	edited := strings.Replace(src, "\tn, err := parse(s)\n", "\ts = s + \"\"\n\tn, err := parse(s)\n", 1)
	if edited == src {
		t.Fatal("fixture changed: no parse call in Load")
	}
	same("a statement added in Load", idsOf(t, fixtureCopy(t, edited, nil)), nil)
}

// TestIDOrdinal: two identical sites in one function share the hash and
// the second gets "#2"; the first keeps the ID it had alone.
func TestIDOrdinal(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(fixture(t), "guard", "guard.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(orig)
	dup := strings.Replace(src, "\tif Mutant == \"open\" {", "\tif n < limit && name != \"\" {\n\t\treturn true\n\t}\n\tif Mutant == \"open\" {", 1)
	base, got := idsOf(t, fixture(t)), idsOf(t, fixtureCopy(t, dup, nil))
	for id := range base {
		if _, ok := got[id]; !ok {
			t.Errorf("%s lost when an identical guard was added below it", id)
		}
		if strings.HasPrefix(id, "guard:Admit:") {
			if _, ok := got[id+"#2"]; !ok {
				t.Errorf("no %s#2 for the identical second guard", id)
			}
		}
	}
	if len(got) != len(base)+3 {
		t.Errorf("got %d ids, want %d (+3: the second guard's negate-cond and two swap-cmp)", len(got), len(base)+3)
	}
}
