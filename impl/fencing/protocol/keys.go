// Package fencing is the reference implementation of the fenced session
// directory: a per-session {lease, generation} pair mutated atomically by Lua,
// whose generation counter is the relay mesh's fencing authority.
//
// Spec 000 §The Fencing Migration. This file holds the key shapes; the
// scripts are embedded .lua files under lua/.
package protocol

import "fmt"

// Session names one tunnel session within a community.
type Session struct {
	Community string
	ID        string
}

func (s Session) String() string { return s.Community + ":" + s.ID }

// Keys is one session's key pair.
type Keys struct {
	Lease      string
	Generation string
}

// KeyRule maps a session to the key pair a script version addresses. Each
// script version has a fixed, version-local rule (§Per-phase operation table).
type KeyRule func(Session) Keys

// OldKeys is the legacy shape `buzz:<community>:tunnel:<session>:lease|generation`:
// no shared hash tag, so the pair spans slots (§System Model: "Blocker (loud)").
func OldKeys(s Session) Keys {
	base := fmt.Sprintf("buzz:%s:tunnel:%s:", s.Community, s.ID)
	return Keys{Lease: base + "lease", Generation: base + "generation"}
}

// NewKeys is the hash-tagged shape `buzz:tunnel:{<community>:<session>}:lease|generation`:
// both keys hash only the tag, so they share one slot (Axiom A1).
func NewKeys(s Session) Keys {
	base := fmt.Sprintf("buzz:tunnel:{%s:%s}:", s.Community, s.ID)
	return Keys{Lease: base + "lease", Generation: base + "generation"}
}

// MisTaggedKeys is a known-bad rule (negative control for the pre-G3
// checklist, §Deployment Gate rule 5): the generation key carries a narrower
// tag than the lease key, so the pair looks tagged yet spans slots. It is
// invisible in disabled mode and a CROSSSLOT outage at G3.
func MisTaggedKeys(s Session) Keys {
	return Keys{
		Lease:      fmt.Sprintf("buzz:tunnel:{%s:%s}:lease", s.Community, s.ID),
		Generation: fmt.Sprintf("buzz:tunnel:{%s}:%s:generation", s.Community, s.ID),
	}
}

// List is the pair in key order: lease, then generation.
func (k Keys) List() []string { return []string{k.Lease, k.Generation} }
