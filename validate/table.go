package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Table is the validator's command table: which arguments of each command are keys. Its
// authoritative source is the server itself — the COMMAND reply (COMMAND INFO's
// first-key, last-key and step, the legacy projection of its key specs) of the Valkey the
// code runs against, read by TableFromCommand. The hand table (Hand) is only the fallback
// for a run with no server reachable; a test (rows/locality, and the CLI's --server)
// proves it agrees with the server's key specs, so the fallback cannot drift silently.
type Table struct {
	// Source says where the table came from: "server <addr> (<version>)" or "hand (fallback: …)".
	Source string
	keys   map[string]keySpec
	// keylessCmds touch no key; movable have keys the server finds by parsing the
	// arguments (numkeys forms, XREAD STREAMS, …), which no fixed position describes.
	keylessCmds map[string]bool
	movable     map[string]bool
}

// Hand returns the hand-written fallback table (commands.go). why says why the server's
// table is not used (it goes into Source).
func Hand(why string) *Table {
	src := "hand"
	if why != "" {
		src += " (fallback: " + why + ")"
	}
	return &Table{Source: src, keys: maps.Clone(keyCommands), keylessCmds: maps.Clone(keyless), movable: map[string]bool{}}
}

// Len is the number of commands the table places keys for (keyed, keyless and movable).
func (t *Table) Len() int { return len(t.keys) + len(t.keylessCmds) + len(t.movable) }

// spec returns a command's key positions; keyless is true for a command with no keys.
// ok is false for a command the table does not know or whose keys are movable.
func (t *Table) spec(name string) (s keySpec, keyless, ok bool) {
	if t.keylessCmds[name] {
		return keySpec{}, true, true
	}
	s, ok = t.keys[name]
	return s, false, ok
}

// multiKeyShape reports whether a command's keys are every argument (first 1, last -1,
// step 1) or exactly the first two (1, 2, 1): the shapes a go-redis method maps onto its
// own arguments one to one (MGet(ctx, keys…), Rename(ctx, a, b)).
func (t *Table) multiKeyShape(name string) (all, two bool) {
	s, ok := t.keys[name]
	if !ok {
		return false, false
	}
	return s == keySpec{1, -1, 1}, s == keySpec{1, 2, 1}
}

// CanGroup reports whether a command can carry several keys (its key range spans more
// than one argument, its keys are movable, or it runs a script), whatever number of keys
// one call of it happens to carry.
func (t *Table) CanGroup(name string) bool {
	name = strings.ToUpper(name)
	if scriptCommands[name] || t.movable[name] {
		return true
	}
	s, ok := t.keys[name]
	return ok && (s.last < 0 || s.last > s.first)
}

// TableFromCommand builds the table from the server's COMMAND (or COMMAND INFO name…)
// reply, as impl/client's Pool.Do normalises it: one array per command of name, arity,
// flags, first key, last key, step, …. A command flagged movablekeys is recorded as
// movable (its keys are not at fixed positions; scripts' numkeys form is handled apart);
// one with first key 0 and no movablekeys is keyless. source names the server.
func TableFromCommand(source string, reply any) (*Table, error) {
	rows, ok := reply.([]any)
	if !ok || len(rows) == 0 {
		return nil, fmt.Errorf("read command table from %s: want a non-empty array, got %T", source, reply)
	}
	t := &Table{Source: "server " + source, keys: map[string]keySpec{}, keylessCmds: map[string]bool{}, movable: map[string]bool{}}
	for i, r := range rows {
		row, ok := r.([]any)
		if !ok {
			if r == nil {
				continue // COMMAND INFO of an unknown name
			}
			return nil, fmt.Errorf("read command table from %s: entry %d is %T, not an array", source, i, r)
		}
		if len(row) < 6 {
			return nil, fmt.Errorf("read command table from %s: entry %d has %d fields, want ≥ 6", source, i, len(row))
		}
		name, ok1 := row[0].(string)
		first, ok2 := row[3].(int64)
		last, ok3 := row[4].(int64)
		step, ok4 := row[5].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, fmt.Errorf("read command table from %s: entry %d (%v) is not name, arity, flags, first, last, step", source, i, row[0])
		}
		name = strings.ToUpper(name)
		flags, _ := row[2].([]any)
		movable := slices.ContainsFunc(flags, func(f any) bool { s, _ := f.(string); return strings.EqualFold(s, "movablekeys") })
		switch {
		case movable:
			t.movable[name] = true
		case first == 0:
			t.keylessCmds[name] = true
		default:
			t.keys[name] = keySpec{int(first), int(last), int(step)}
		}
	}
	if len(t.keys) == 0 {
		return nil, fmt.Errorf("read command table from %s: no keyed command in %d entries", source, len(rows))
	}
	return t, nil
}

// Disagreement is one way the hand table differs from a server's.
type Disagreement struct {
	Command string
	Hand    string
	Server  string
}

func (d Disagreement) String() string {
	return d.Command + ": hand " + d.Hand + ", server " + d.Server
}

func (s keySpec) String() string { return fmt.Sprintf("keys %d..%d step %d", s.first, s.last, s.step) }

// Agree compares the hand table with a server's (t): every command the hand table
// places must have the same key positions on the server, every hand-keyless command must
// be keyless there. The hand table may be smaller; it may never be different.
func (t *Table) Agree(hand *Table) []Disagreement {
	var out []Disagreement
	describe := func(name string) string {
		if s, keyless, ok := t.spec(name); ok {
			if keyless {
				return "keyless"
			}
			return s.String()
		}
		if t.movable[name] {
			return "movable keys"
		}
		return "unknown command"
	}
	for _, name := range slices.Sorted(maps.Keys(hand.keys)) {
		if s, keyless, ok := t.spec(name); !ok || keyless || s != hand.keys[name] {
			out = append(out, Disagreement{name, hand.keys[name].String(), describe(name)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(hand.keylessCmds)) {
		if _, keyless, ok := t.spec(name); !ok || !keyless {
			out = append(out, Disagreement{name, "keyless", describe(name)})
		}
	}
	return out
}

// With returns a copy of t in which name's keys are at first..last by step: an edited
// table, for a self-test that Agree notices a drifted entry.
func (t *Table) With(name string, first, last, step int) *Table {
	c := &Table{Source: t.Source + " (edited: " + name + ")", keys: maps.Clone(t.keys), keylessCmds: maps.Clone(t.keylessCmds), movable: maps.Clone(t.movable)}
	c.keys[strings.ToUpper(name)] = keySpec{first, last, step}
	return c
}
