package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrBadInput marks input the validator cannot run on (a directory that does not exist);
// the CLI maps it to exit 2.
var ErrBadInput = errors.New("bad input")

// Result is what one validation run found and over how much.
type Result struct {
	Findings []Finding
	Files    int    // source files examined
	Table    string // the command table's source (Table.Source)
}

// Dirs validates every .lua file under each directory (and, through the Go rule, Lua source
// embedded in Go string literals of non-test .go files). Like the go tool it skips testdata,
// vendor and dot directories below a root, so the known-bad corpus only runs when named.
func Dirs(dirs []string) (Result, error) { return defaultTable.Dirs(dirs) }

// Dirs is Dirs with t's command table.
func (t *Table) Dirs(dirs []string) (Result, error) {
	res := Result{Table: t.Source}
	for _, root := range dirs {
		st, err := os.Stat(root)
		if err != nil {
			return res, fmt.Errorf("%w: validate %s: %v", ErrBadInput, root, err)
		}
		if !st.IsDir() {
			return res, fmt.Errorf("%w: validate %s: not a directory", ErrBadInput, root)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case strings.HasSuffix(path, ".lua"):
				src, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				res.Files++
				res.Findings = append(res.Findings, t.CheckLua(path, string(src), 1)...)
			case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				src, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				res.Files++
				got, err := t.CheckGo(path, src)
				if err != nil {
					return err
				}
				res.Findings = append(res.Findings, got...)
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("validate %s: %w", root, err)
		}
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		a, b := res.Findings[i], res.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return res, nil
}
