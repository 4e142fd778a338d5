// Package script serves embedded Lua scripts mutated in a schemata build
// (`slotgate mutate --kind marconi-lua`): gomut.GenerateLuaSchemata
// wraps the source argument of every client.NewScript call of a package
// in Source, and a generated file of the package holds the mutated
// scripts. It is apart from package schema on purpose: the Go schemata
// type-check schema from source against only the export data of the
// mutated packages' own imports, so schema imports nothing a target
// package might not (crypto/sha1 here).
package script

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/slotgate/slotgate/mutate/schema"
)

// activeID is the active mutant id (schema.Active; a test swaps it).
var activeID = schema.Active

// EnvServed names a file a schemata build appends "<id> <sha1>" to each
// time a script passes through Source while a mutant is active: the sha1
// of the script Source returned, the one EVALSHA and SCRIPT LOAD name it
// by. A run of an embedded-Lua mutant must show its mutated script's sha
// and never its original's (mutate.GoRunner): the proof it ran the mutant,
// not the original. Unset: nothing written.
const EnvServed = "SLOTGATE_MUTANT_SERVED"

// Script is one mutant of an embedded Lua script: the script as impl
// embeds it and the mutated source to serve instead.
type Script struct{ Original, Mutated string }

// Source is src, or the active mutant's mutated script when the active
// mutant is in ms and mutates exactly src (embedded-Lua mutants:
// gomut.GenerateLuaSchemata wraps the source argument of every
// client.NewScript call of a package in it). Matching the original text,
// not a name, means a package's other scripts are never replaced. What it
// returns is logged (EnvServed) whenever a mutant is active, so an
// override that did not apply shows up as the original's sha.
func Source(src string, ms map[string]Script) string {
	id := activeID()
	if id == "" {
		return src
	}
	out := src
	if m, ok := ms[id]; ok && m.Original == src {
		out = m.Mutated
	}
	served(id, out)
	return out
}

// served appends the active id and the sha1 of src to EnvServed's file.
// A write that fails is not reported here: the runner finds the line
// missing and refuses the verdict, which is the safe side.
func served(id, src string) {
	p := os.Getenv(EnvServed)
	if p == "" {
		return
	}
	sum := sha1.Sum([]byte(src))
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", id, hex.EncodeToString(sum[:]))
	f.Close()
}
