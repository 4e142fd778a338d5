package gomut

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Why coverage decides which specs run a Go mutant: running
// every spec of a mutant's rows cost ~3 minutes a mutant, most of it specs
// that never execute the mutated function. A spec whose baseline run does
// not reach the mutated code cannot see the mutant (the program is the
// same until it gets there), so only the specs that reach it run it, and a
// mutant no spec reaches is a survivor the report names as not covered —
// a path no workload takes, which is a finding, not an equivalent.
//
// The caveat is one run's coverage: a spec whose path depends on timing
// may reach code in one run and not in another. The map is built with the
// seed the mutants run with, so the workload is the same.

// Block is one basic block of a Go coverage profile (`go tool covdata
// textfmt`, or -coverprofile): File is module-relative, the Span is the
// block's source extent and Count how often it ran (mode set: 0 or 1).
type Block struct {
	File  string
	Span  Span
	Count int
}

// Profile is one run's coverage, by module-relative file.
type Profile map[string][]Block

// ParseProfile reads a text coverage profile, keeping the blocks of files
// under module modPath (their paths made module-relative). Blocks that
// appear more than once (a profile merged from several processes) are
// kept as they are: Reaches asks whether any of them ran.
func ParseProfile(r io.Reader, modPath string) (Profile, error) {
	p := Profile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 && strings.HasPrefix(line, "mode:") || strings.TrimSpace(line) == "" {
			continue
		}
		// name.go:L0.C0,L1.C1 statements count
		colon := strings.LastIndex(line, ":")
		if colon < 0 {
			return nil, fmt.Errorf("read coverage profile line %d: %q", n, line)
		}
		file, rest := line[:colon], line[colon+1:]
		f := strings.Fields(rest)
		if len(f) != 3 {
			return nil, fmt.Errorf("read coverage profile line %d: %q", n, line)
		}
		var s Span
		if _, err := fmt.Sscanf(f[0], "%d.%d,%d.%d", &s.StartLine, &s.StartCol, &s.EndLine, &s.EndCol); err != nil {
			return nil, fmt.Errorf("read coverage profile line %d: %w", n, err)
		}
		count, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("read coverage profile line %d: %w", n, err)
		}
		rel, ok := strings.CutPrefix(file, modPath+"/")
		if !ok {
			continue
		}
		p[rel] = append(p[rel], Block{File: rel, Span: s, Count: count})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read coverage profile: %w", err)
	}
	return p, nil
}

// Reaches reports whether the run p executed mutant m's code: a block that
// overlaps the mutated node ran. When no block overlaps it at all (a
// tagless switch's case expression sits between the blocks the cover tool
// draws), any block of its function that ran counts: a conservative
// answer, never a false "not reached".
func (p Profile) Reaches(m Mutant) bool {
	blocks := p[m.File]
	overlapped := false
	for _, b := range blocks {
		if overlaps(b.Span, m.Span) {
			if b.Count > 0 {
				return true
			}
			overlapped = true
		}
	}
	if overlapped {
		return false
	}
	for _, b := range blocks {
		if b.Count > 0 && overlaps(b.Span, m.FuncSpan) {
			return true
		}
	}
	return false
}

// overlaps reports whether the half-open extents a and b share a byte.
func overlaps(a, b Span) bool {
	return before(a.StartLine, a.StartCol, b.EndLine, b.EndCol) && before(b.StartLine, b.StartCol, a.EndLine, a.EndCol)
}

func before(l1, c1, l2, c2 int) bool { return l1 < l2 || l1 == l2 && c1 < c2 }
