package fencing

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyEmbedded writes the embedded set (manifest and the files it names) to
// a temporary directory, as a user would copy impl/fencing/lua.
func copyEmbedded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sub, err := fs.Sub(luaFiles, "lua")
	if err != nil {
		t.Fatal(err)
	}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadScriptsCopyOfEmbeddedIsIdentical(t *testing.T) {
	set, err := LoadScripts(copyEmbedded(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Fallback) != 0 {
		t.Fatalf("a full copy fell back on %v", set.Fallback)
	}
	for _, p := range Phases {
		got, want := set.Phase(p), ForPhase(p)
		for i, pair := range [][2]string{{got.Acquire.SHA1, want.Acquire.SHA1}, {got.Renew.SHA1, want.Renew.SHA1}, {got.Release.SHA1, want.Release.SHA1}, {got.Lookup.SHA1, want.Lookup.SHA1}, {got.Validate.SHA1, want.Validate.SHA1}} {
			if pair[0] != pair[1] {
				t.Fatalf("phase %s op %d differs from the embedded script", p, i)
			}
		}
	}
	if len(set.Files()) != 22 {
		t.Fatalf("files %d, want 22", len(set.Files()))
	}
}

func TestLoadScriptsPartialSetFallsBack(t *testing.T) {
	dir := copyEmbedded(t)
	manifest := `{"scripts": [
		{"file": "c/acquire.lua", "op": "acquire", "phase": "c"},
		{"file": "c/renew.lua", "op": "renew", "phase": "c"},
		{"file": "c/release.lua", "op": "release", "phase": "c"},
		{"file": "c/lookup.lua", "op": "lookup", "phase": "c"},
		{"file": "c/validate.lua", "op": "validate", "phase": "C"}]}`
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := LoadScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Fallback, ","); got != "phase o,phase a,phase b,backfill,reverse_merge" {
		t.Fatalf("fallback %q", got)
	}
}

func TestParseManifestRefuses(t *testing.T) {
	for name, m := range map[string]string{
		"unknown op":       `{"scripts":[{"file":"x.lua","op":"steal","phase":"c"}]}`,
		"unknown phase":    `{"scripts":[{"file":"x.lua","op":"acquire","phase":"d"}]}`,
		"incomplete phase": `{"scripts":[{"file":"x.lua","op":"acquire","phase":"c"}]}`,
		"duplicate":        `{"scripts":[{"file":"x.lua","op":"backfill","phase":"migration"},{"file":"y.lua","op":"backfill","phase":"migration"}]}`,
		"merge in a phase": `{"scripts":[{"file":"x.lua","op":"backfill","phase":"c"}]}`,
		"escaping path":    `{"scripts":[{"file":"../x.lua","op":"backfill","phase":"migration"}]}`,
		"unknown field":    `{"scripts":[{"file":"x.lua","op":"backfill","phase":"migration","why":1}]}`,
		"empty":            `{"scripts":[]}`,
		"not json":         `scripts: x`,
	} {
		if _, err := ParseManifest([]byte(m)); !errors.Is(err, ErrBadScriptSet) {
			t.Errorf("%s: err %v, want ErrBadScriptSet", name, err)
		}
	}
	if _, err := LoadScripts(t.TempDir()); !errors.Is(err, ErrBadScriptSet) {
		t.Errorf("no manifest: err %v", err)
	}
	if _, err := LoadScripts("/nonexistent/scripts"); !errors.Is(err, ErrBadScriptSet) {
		t.Errorf("missing dir: err %v", err)
	}
}
