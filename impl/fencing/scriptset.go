package fencing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/slotgate/slotgate/impl/client"
)

// ManifestName is the file that maps a script-set directory's .lua files to
// their operation and phase (see README "Bring your own scripts").
const ManifestName = "manifest.json"

// Op is one operation of the fencing protocol a script implements (spec 000
// §Per-phase operation table, plus the two operator-run merges of §The
// protocol and §Deployment Gate rule 4).
type Op string

const (
	OpAcquire  Op = "acquire"
	OpRenew    Op = "renew"
	OpRelease  Op = "release"
	OpLookup   Op = "lookup" // lookup and known_generation, one atomic read
	OpValidate Op = "validate"
	// OpBackfill and OpReverseMerge belong to phase "migration".
	OpBackfill     Op = "backfill"
	OpReverseMerge Op = "reverse_merge"
)

// PhaseOps are the operations every phase's script version must provide.
var PhaseOps = []Op{OpAcquire, OpRenew, OpRelease, OpLookup, OpValidate}

// MigrationPhase is the manifest's phase name of the backfill and reverse
// merge scripts, which belong to no one script version.
const MigrationPhase = "migration"

// Manifest is a script set's manifest.json.
type Manifest struct {
	// Name labels the set in reports; empty means the directory.
	Name    string          `json:"name,omitempty"`
	Scripts []ManifestEntry `json:"scripts"`
}

// ManifestEntry maps one .lua file (a slash path relative to the manifest)
// to its operation and phase (o, a, b, c, or migration).
type ManifestEntry struct {
	File  string `json:"file"`
	Op    Op     `json:"op"`
	Phase string `json:"phase"`
}

// ErrBadScriptSet marks a script-set directory or manifest a user must fix.
var ErrBadScriptSet = errors.New("bad script set")

// ScriptSet is a whole fencing script set: each phase's version and the two
// merges. The embedded one (Embedded) is impl's own; LoadScripts reads a
// user's (the relay's ACQUIRE_SCRIPT & co. extracted to files) or a mutant's,
// so the fencing rows judge scripts that were never compiled into slotgate.
type ScriptSet struct {
	// Name is the manifest's name, or the directory it was loaded from.
	Name string
	// Dir is the directory the set was loaded from ("" when embedded).
	Dir string
	// Fallback lists what the manifest left out and the embedded set
	// supplies ("phase a", "backfill"): a set may cover only the phases
	// the relay ships, and a report must say what it did not judge.
	Fallback []string
	src      map[scriptKey]source
}

type scriptKey struct {
	phase string // o, a, b, c, migration
	op    Op
}

type source struct{ file, text string }

var (
	embeddedOnce sync.Once
	embeddedSet  *ScriptSet
)

// Embedded is impl's own script set, read from lua/manifest.json: the example
// of the manifest format and the set every row runs by default.
func Embedded() *ScriptSet {
	embeddedOnce.Do(func() {
		sub, err := fs.Sub(luaFiles, "lua")
		if err == nil {
			embeddedSet, err = ScriptsFromFS(sub, "embedded")
		}
		if err != nil {
			panic(fmt.Sprintf("fencing: embedded script set: %v", err))
		}
	})
	return embeddedSet
}

// LoadScripts reads the script set in dir (dir/manifest.json and the files it
// names). Phases the manifest leaves out come from the embedded set and are
// listed in Fallback.
func LoadScripts(dir string) (*ScriptSet, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadScriptSet, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrBadScriptSet, dir)
	}
	s, err := ScriptsFromFS(os.DirFS(dir), dir)
	if err != nil {
		return nil, fmt.Errorf("load scripts %s: %w", dir, err)
	}
	s.Dir = dir
	s.fillFrom(Embedded())
	return s, nil
}

// ParseManifest parses and checks a manifest: known operations and phases,
// no file or (phase, operation) twice, every phase it names complete.
func ParseManifest(b []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrBadScriptSet, ManifestName, err)
	}
	if len(m.Scripts) == 0 {
		return m, fmt.Errorf("%w: %s lists no scripts", ErrBadScriptSet, ManifestName)
	}
	seen := map[scriptKey]string{}
	files := map[string]bool{}
	phases := map[string]int{}
	for i, e := range m.Scripts {
		where := fmt.Sprintf("%s: scripts[%d] (%s)", ManifestName, i, e.File)
		if e.File == "" || path.IsAbs(e.File) || !fs.ValidPath(e.File) {
			return m, fmt.Errorf("%w: %s: file must be a relative slash path inside the directory", ErrBadScriptSet, where)
		}
		ph := strings.ToLower(e.Phase)
		switch ph {
		case "o", "a", "b", "c":
			if !slices.Contains(PhaseOps, e.Op) {
				return m, fmt.Errorf("%w: %s: op %q is not a phase operation (want %s)", ErrBadScriptSet, where, e.Op, opList(PhaseOps))
			}
		case MigrationPhase:
			if e.Op != OpBackfill && e.Op != OpReverseMerge {
				return m, fmt.Errorf("%w: %s: phase migration holds only backfill and reverse_merge, not %q", ErrBadScriptSet, where, e.Op)
			}
		default:
			return m, fmt.Errorf("%w: %s: unknown phase %q (want o, a, b, c or migration)", ErrBadScriptSet, where, e.Phase)
		}
		k := scriptKey{ph, e.Op}
		if prev, dup := seen[k]; dup {
			return m, fmt.Errorf("%w: %s: phase %s op %s already given by %s", ErrBadScriptSet, where, ph, e.Op, prev)
		}
		if files[e.File] {
			return m, fmt.Errorf("%w: %s: file listed twice", ErrBadScriptSet, where)
		}
		seen[k], files[e.File] = e.File, true
		if ph != MigrationPhase {
			phases[ph]++
		}
		m.Scripts[i].Phase = ph
	}
	for ph, n := range phases {
		if n != len(PhaseOps) {
			var missing []Op
			for _, op := range PhaseOps {
				if _, ok := seen[scriptKey{ph, op}]; !ok {
					missing = append(missing, op)
				}
			}
			return m, fmt.Errorf("%w: %s: phase %s is incomplete, missing %s (a phase is one deployable script version: give all of %s, or leave the phase out)", ErrBadScriptSet, ManifestName, ph, opList(missing), opList(PhaseOps))
		}
	}
	return m, nil
}

func opList(ops []Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// ScriptsFromFS reads a script set from fsys's manifest.json; name labels it
// when the manifest has none. Nothing is filled in from the embedded set.
func ScriptsFromFS(fsys fs.FS, name string) (*ScriptSet, error) {
	b, err := fs.ReadFile(fsys, ManifestName)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (a script set is a directory with a %s; see README, Bring your own scripts)", ErrBadScriptSet, err, ManifestName)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, err
	}
	s := &ScriptSet{Name: name, src: map[scriptKey]source{}}
	if m.Name != "" {
		s.Name = m.Name
	}
	for _, e := range m.Scripts {
		text, err := fs.ReadFile(fsys, e.File)
		if err != nil {
			return nil, fmt.Errorf("%w: %s names %s: %v", ErrBadScriptSet, ManifestName, e.File, err)
		}
		s.src[scriptKey{e.Phase, e.Op}] = source{file: e.File, text: string(text)}
	}
	return s, nil
}

func (s *ScriptSet) fillFrom(base *ScriptSet) {
	for _, ph := range []string{"o", "a", "b", "c"} {
		if _, ok := s.src[scriptKey{ph, OpAcquire}]; ok {
			continue
		}
		for _, op := range PhaseOps {
			s.src[scriptKey{ph, op}] = base.src[scriptKey{ph, op}]
		}
		s.Fallback = append(s.Fallback, "phase "+ph)
	}
	for _, op := range []Op{OpBackfill, OpReverseMerge} {
		if _, ok := s.src[scriptKey{MigrationPhase, op}]; !ok {
			s.src[scriptKey{MigrationPhase, op}] = base.src[scriptKey{MigrationPhase, op}]
			s.Fallback = append(s.Fallback, string(op))
		}
	}
}

// Files lists the set's scripts (phase, operation, file, source), sorted by
// file: what a mutation run mutates and the locality validator reads.
func (s *ScriptSet) Files() []ManifestEntry {
	var out []ManifestEntry
	for k, v := range s.src {
		out = append(out, ManifestEntry{File: v.file, Op: k.op, Phase: k.phase})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Phase+string(out[i].Op) < out[j].Phase+string(out[j].Op)
	})
	return out
}

func (s *ScriptSet) script(phase string, op Op) *client.Script {
	src, ok := s.src[scriptKey{phase, op}]
	if !ok {
		panic(fmt.Sprintf("fencing: script set %s has no %s %s", s.Name, phase, op))
	}
	// A fresh Script each time: its Stats belong to one directory's run.
	return client.NewScript(src.file, src.text)
}

// Phase returns the set's script version of p (spec 000 §Per-phase operation
// table). It panics on an unknown phase (a programming error).
func (s *ScriptSet) Phase(p Phase) Scripts {
	if p.Index() < 0 {
		panic(fmt.Sprintf("fencing: unknown phase %q", p))
	}
	ph := strings.ToLower(string(p))
	return Scripts{
		Name:     string(p),
		Phase:    p,
		Acquire:  s.script(ph, OpAcquire),
		Renew:    s.script(ph, OpRenew),
		Release:  s.script(ph, OpRelease),
		Lookup:   s.script(ph, OpLookup),
		Validate: s.script(ph, OpValidate),
	}
}

// PhaseMutant is ForPhaseMutant over this set: phase p's scripts with the
// script mutant m's acquire when m touches p.
func (s *ScriptSet) PhaseMutant(p Phase, m MigrationMutant) Scripts {
	sc := s.Phase(p)
	file := map[MigrationMutant]string{M1: "m1_acquire_b.lua", M2: "m2_acquire_a.lua", M3: "m3_acquire_b.lua", M5: "m5_acquire_a.lua"}[m]
	if file == "" || m.ScriptPhase() != p {
		return sc
	}
	sc.Name = string(p) + "+" + string(m)
	sc.Acquire = mustScript("mutants/migration/" + file)
	return sc
}

// Backfill is the package's Backfill with this set's backfill script.
func (s *ScriptSet) Backfill(ctx context.Context, pool client.Pool, sessions []Session) (int, error) {
	return s.BackfillDurable(ctx, pool, sessions, Durability{})
}

// BackfillDurable is Backfill with every merge confirmed by WAIT when d is
// on (the durability mode of Options.Durability).
func (s *ScriptSet) BackfillDurable(ctx context.Context, pool client.Pool, sessions []Session, d Durability) (int, error) {
	return mergeCounters(ctx, pool, s.script(MigrationPhase, OpBackfill), sessions, "backfill", d)
}

// ReverseMerge is the package's ReverseMerge with this set's reverse-merge
// script.
func (s *ScriptSet) ReverseMerge(ctx context.Context, pool client.Pool, sessions []Session) (int, error) {
	return s.ReverseMergeDurable(ctx, pool, sessions, Durability{})
}

// ReverseMergeDurable is ReverseMerge with every merge confirmed by WAIT
// when d is on.
func (s *ScriptSet) ReverseMergeDurable(ctx context.Context, pool client.Pool, sessions []Session, d Durability) (int, error) {
	return mergeCounters(ctx, pool, s.script(MigrationPhase, OpReverseMerge), sessions, "reverse merge", d)
}

// EmbeddedFS is the embedded script directory (impl/fencing/lua, rooted at
// its manifest.json), for tools that copy or mutate it.
func EmbeddedFS() fs.FS {
	sub, err := fs.Sub(luaFiles, "lua")
	if err != nil {
		panic(fmt.Sprintf("fencing: embedded scripts: %v", err))
	}
	return sub
}

// Text is the source of one of the set's scripts (an entry of Files).
func (s *ScriptSet) Text(e ManifestEntry) string { return s.src[scriptKey{e.Phase, e.Op}].text }

// WriteDir writes the set as a script-set directory (manifest.json and every
// file), with replace[file] in place of a file's own source: a mutant's set,
// or a complete copy of a set that fell back on the embedded scripts.
func (s *ScriptSet) WriteDir(dir string, replace map[string]string) error {
	m := Manifest{Name: s.Name}
	for _, e := range s.Files() {
		text := s.Text(e)
		if r, ok := replace[e.File]; ok {
			text = r
		}
		dst := filepath.Join(dir, filepath.FromSlash(e.File))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("write script set: %w", err)
		}
		if err := os.WriteFile(dst, []byte(text), 0o644); err != nil {
			return fmt.Errorf("write script set: %w", err)
		}
		m.Scripts = append(m.Scripts, e)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write script set: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644)
}

// MergeMutant names a known-bad backfill (a negative control of spec 000
// §The protocol, "Backfill … fold oldGen into newGen by max-merge").
type MergeMutant string

const (
	// BackfillOverwrite writes the old counter over the new one (SET, no
	// max): a session whose new counter B already advanced goes backwards.
	BackfillOverwrite MergeMutant = "backfill-overwrite"
)

// WithMergeMutant returns a copy of the set whose backfill is m's script;
// every other script is the set's own.
func (s *ScriptSet) WithMergeMutant(m MergeMutant) (*ScriptSet, error) {
	file := map[MergeMutant]string{BackfillOverwrite: "mutants/migration/backfill_overwrite.lua"}[m]
	if file == "" {
		return nil, fmt.Errorf("unknown merge mutant %q", m)
	}
	text, err := luaFiles.ReadFile("lua/" + file)
	if err != nil {
		return nil, fmt.Errorf("merge mutant %s: %w", m, err)
	}
	out := &ScriptSet{Name: s.Name + "+" + string(m), Dir: s.Dir, Fallback: s.Fallback, src: map[scriptKey]source{}}
	for k, v := range s.src {
		out.src[k] = v
	}
	out.src[scriptKey{MigrationPhase, OpBackfill}] = source{file: file, text: string(text)}
	return out, nil
}
