package history

import "time"

// PodPause is one pause of a relay pod as the fleet recorded it: every
// goroutine frozen (a GC pause, SIGSTOP) from From until To, then resumed
// with what it believed — Beliefs, the generation of each session it
// thought it held (spec 000 §Safety theorems; the classic fencing fault).
type PodPause struct {
	Pod string
	// Label names what the pause spanned (a phase, or "B→C drain").
	Label string
	// Phase is the script phase the pod ran when it froze.
	Phase    string
	From, To time.Duration
	Beliefs  map[string]int64
}
