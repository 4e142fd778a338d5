package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// CorpusEntry is one known-bad fixture: the rules its first line says it must trip, and
// what the validator found in it.
type CorpusEntry struct {
	File string
	Want []Rule
	Got  []Finding
}

// Flagged reports that the fixture tripped every rule it names and nothing else: a fixture
// that trips another rule is mislabelled, and one that trips nothing is a blind spot.
func (e CorpusEntry) Flagged() bool {
	if len(e.Got) == 0 || len(e.Want) == 0 {
		return false
	}
	seen := map[Rule]bool{}
	for _, f := range e.Got {
		if !slices.Contains(e.Want, f.Rule) {
			return false
		}
		seen[f.Rule] = true
	}
	return len(seen) == len(e.Want)
}

// Corpus runs the validator over every fixture in dir (*.lua and *.go, not recursive).
// Each fixture's first line names the rule(s) it must trip, space-separated:
// `-- want: lua/key-from-argv` in Lua, `// want: go/script-keys` in Go. A fixture without
// that line is bad input.
func Corpus(dir string) ([]CorpusEntry, error) { return defaultTable.Corpus(dir) }

// Corpus is Corpus with t's command table.
func (t *Table) Corpus(dir string) ([]CorpusEntry, error) {
	var files []string
	for _, pat := range []string{"*.lua", "*.go"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, fmt.Errorf("%w: corpus %s: %v", ErrBadInput, dir, err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: corpus %s: no .lua or .go fixtures", ErrBadInput, dir)
	}
	sort.Strings(files)
	out := make([]CorpusEntry, 0, len(files))
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		prefix := "-- want:"
		if strings.HasSuffix(path, ".go") {
			prefix = "// want:"
		}
		want, ok := strings.CutPrefix(first, prefix)
		if !ok || strings.TrimSpace(want) == "" {
			return nil, fmt.Errorf("%w: corpus %s: first line must be `%s <rule> [<rule>…]`, got %q", ErrBadInput, path, prefix, first)
		}
		e := CorpusEntry{File: path}
		for _, r := range strings.Fields(want) {
			e.Want = append(e.Want, Rule(r))
		}
		if strings.HasSuffix(path, ".go") {
			if e.Got, err = t.CheckGo(path, src); err != nil {
				return nil, fmt.Errorf("corpus: %w", err)
			}
		} else {
			e.Got = t.CheckLua(path, string(src), 1)
		}
		out = append(out, e)
	}
	return out, nil
}
